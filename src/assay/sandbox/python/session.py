"""Drive one child through its chunk: write the request, read one framed result per sample and
what each sample printed, under caps and a per-sample deadline.

Everything read here comes from untrusted code and is treated as hostile bytes: frames and
output stop at fixed caps, the deadline is the host's own clock (it restarts at each frame, so
every sample has its whole time limit), and a child that overstays is killed through its pidfd
(it cannot fork, so killing the one process ends all its threads).

The frames are ``frames``'s: each carries what its sample printed.
"""

from __future__ import annotations

import os
import select
import signal
import time
from dataclasses import dataclass, field

from assay.sandbox.activity import activity
from assay.sandbox.priority import demote
from assay.sandbox.python.frames import FRAME_HEAD, SIZE_MASK, STOP_FLAG
from assay.sandbox.python.handle import Child
from assay.sandbox.results import MAX_PRINTED_CHARS, MAX_RETURNED_JSON_CHARS

MAX_RESULT_PIPE_BYTES = MAX_RETURNED_JSON_CHARS + 1024
"""Bytes of one result frame: the child's own cap on the returned value (ASCII JSON: one byte a
character) plus the envelope around it. A longer frame stops the child."""
MAX_FRAME_PRINTED_BYTES = 4 * MAX_PRINTED_CHARS + 256
"""Bytes of printed text in one frame: the child keeps ``MAX_PRINTED_CHARS`` characters and a note."""
PRINTED_KEPT_BYTES = 64 * 1024
"""Bytes written to fds 1 and 2 (past ``sys.stdout``) kept for the sample whose frame comes next."""
PRINTED_READ_MAX_BYTES = 1 << 20
"""Bytes of the output pipe read before the host closes it (further writes fail in the child)."""
PACE_S = 0.001
"""While a child streams frames, the host reads them every millisecond rather than at each one:
fewer wake-ups on both sides, and a sample's deadline is still kept to the millisecond."""
_KILL_GRACE_S = 5.0


@dataclass(slots=True)
class Exchange:
    """What the child produced for one sample, before classification."""

    result: bytes = b""
    output: bytes = b""
    output_total: int = 0
    timed_out: bool = False
    result_overflow: bool = False
    exited: bool = False
    elapsed_ms: float = 0.0
    activity: str | None = None
    """What the child was doing when its deadline passed (``activity``), when that could be read."""


@dataclass(slots=True)
class Session:
    """A child's chunk: a finished ``Exchange`` per sample it answered, then (``tail``) the one it
    was on when it stopped without answering, if any. ``exited``: the child is known to be gone."""

    answered: list[Exchange] = field(default_factory=list)
    tail: Exchange | None = None
    exited: bool = False
    released: bool = False
    """Every sample was answered: the child, exited or about to, was sent SIGKILL without waiting
    for its teardown (a few milliseconds of unmapping a forked heap), and no wait status is
    needed to explain a missing result, so the zygote may reap it later."""


def exchange(child: Child, payload: bytes, count: int, timeout_s: float,
             demote_after_s: float | None = None) -> Session:
    """Send ``payload`` (``count`` samples) to ``child`` and collect its frames until it exits;
    past ``demote_after_s`` (None: never) the child goes on at the lowest CPU priority."""
    return _Reader(child, count, timeout_s, demote_after_s).run(payload)


class _Reader:
    def __init__(self, child: Child, count: int, timeout_s: float, demote_after_s: float | None) -> None:
        self.child = child
        self.count = count
        self.timeout_s = timeout_s
        self.session = Session()
        self.frames = bytearray()
        self.output = bytearray()
        self.output_total = 0
        self.overflow = self.stopped = self.cut = False
        self.activity: str | None = None
        self.started = time.monotonic()
        """When the sample now running started: the child's start, then each frame's arrival."""
        self.demote_at = None if demote_after_s is None else self.started + demote_after_s
        """When the child's CPU priority is lowered (``sandbox.priority``); None once it is."""

    def run(self, payload: bytes) -> Session:
        child = self.child
        os.set_blocking(child.req_w, False)
        pending = memoryview(payload)
        poller = select.poll()
        for fd, event in ((child.req_w, select.POLLOUT), (child.res_r, select.POLLIN),
                          (child.log_r, select.POLLIN), (child.pidfd, select.POLLIN)):
            poller.register(fd, event)
        open_reads = {child.res_r, child.log_r}
        exited = timed_out = False
        paced = False
        # Done when the child has exited, or has answered every sample and is then killed: a
        # result alone does not prove its threads are gone, the SIGKILL does.
        while (open_reads or not exited) and len(self.session.answered) < self.count:
            if paced:
                time.sleep(PACE_S)
                paced = False
            now = time.monotonic()
            left = self.started + self.timeout_s - now  # the sample's own time, from its start
            if left <= 0:
                timed_out = True
                self.activity = activity(child.pid)
                break
            if self.demote_at is not None:
                if now >= self.demote_at:
                    demote(child.pid)  # its own session: the group is the child's
                    self.demote_at = None
                else:
                    left = min(left, self.demote_at - now)
            for fd, _events in poller.poll(left * 1000):
                if fd == child.req_w:
                    try:
                        pending = pending[os.write(fd, pending):]
                    except BrokenPipeError:
                        pending = pending[:0]  # the child is gone; its exit tells the rest
                    if not pending:
                        poller.unregister(fd)
                        os.close(fd)
                        child.req_w = -1
                elif fd == child.pidfd:
                    exited = True
                    poller.unregister(fd)
                elif fd == child.res_r:
                    answered = len(self.session.answered)
                    if not self._read_frames(fd):
                        poller.unregister(fd)
                        open_reads.discard(fd)
                        if self.overflow or self.stopped or self.cut:
                            open_reads.clear()  # nothing more worth reading: stop it now
                            exited = exited or _kill(child)
                    if len(self.session.answered) > answered:
                        paced = fd in open_reads
                elif not self._read_output(fd):
                    # Closing our end makes further writes fail with EPIPE in the child.
                    poller.unregister(fd)
                    open_reads.discard(fd)
                    os.close(fd)
                    child.log_r = -1
        self.session.released = len(self.session.answered) >= self.count
        if self.session.released:
            if not exited:
                _signal(child)
        elif not exited:
            exited = _kill(child)
        self.session.exited = exited
        if len(self.session.answered) < self.count and not self.stopped:
            # A partial frame is no result: the child died or was stopped while writing it.
            self.session.tail = Exchange(b"", bytes(self.output), self.output_total, timed_out,
                                         self.overflow, exited, self._elapsed(), self.activity)
        return self.session

    def _read_frames(self, fd: int) -> bool:
        """Read from the result pipe and take every whole frame; False once the pipe is done with."""
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            return False
        self.frames += chunk
        while len(self.frames) >= FRAME_HEAD.size:
            head, printed = FRAME_HEAD.unpack_from(self.frames)
            size = head & SIZE_MASK
            if size > MAX_RESULT_PIPE_BYTES or printed > MAX_FRAME_PRINTED_BYTES:
                self.overflow = True
                return False
            end = FRAME_HEAD.size + printed + size
            if len(self.frames) < end:
                break
            if size == 0:  # the child stops before the next sample: a fresh child takes it
                self.stopped = head & STOP_FLAG != 0
                if not self.stopped:
                    self.overflow = True  # out of protocol: no envelope is empty
                return False
            text = self.frames[FRAME_HEAD.size:FRAME_HEAD.size + printed]
            self.session.answered.append(Exchange(
                bytes(self.frames[end - size:end]), bytes(self.output + text), self.output_total + printed,
                elapsed_ms=self._elapsed()))
            del self.frames[:end]
            self.output.clear()
            self.output_total = 0
            self.started = time.monotonic()
            if head & STOP_FLAG or len(self.session.answered) >= self.count:
                self.stopped = len(self.session.answered) < self.count
                return False
            if self.cut:  # the output pipe was closed on this sample: a fresh child takes the rest
                self.stopped = True
                return False
        return True

    def _read_output(self, fd: int) -> bool:
        """Read what the code wrote to fds 1 and 2; False once the pipe ended or had too much."""
        chunk = os.read(fd, 1 << 16)
        self.output_total += len(chunk)
        if len(self.output) < PRINTED_KEPT_BYTES:
            self.output += chunk[:PRINTED_KEPT_BYTES - len(self.output)]
        if chunk and self.output_total >= PRINTED_READ_MAX_BYTES:
            self.cut = True
        return bool(chunk) and not self.cut

    def _elapsed(self) -> float:
        return (time.monotonic() - self.started) * 1000


def _signal(child: Child) -> None:
    """SIGKILL the child (nothing when it is already gone): none of its threads runs user code
    again once the signal is queued."""
    try:
        signal.pidfd_send_signal(child.pidfd, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _kill(child: Child) -> bool:
    """SIGKILL the child and wait (bounded) until it has exited; True once it has."""
    _signal(child)
    ready = select.select([child.pidfd], [], [], _KILL_GRACE_S)[0]
    return bool(ready)
