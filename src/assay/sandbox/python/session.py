"""Drive one evaluation: write the request, read result and output under caps, enforce the deadline.

Everything read here comes from untrusted code and is treated as hostile bytes: reads stop
at fixed caps, the deadline is the host's own clock, and a child that overstays is killed
through its pidfd (it cannot fork, so killing the one process ends all its threads).
"""

from __future__ import annotations

import os
import select
import signal
import time
from dataclasses import dataclass

from assay.sandbox.python.handle import Child
from assay.sandbox.results import MAX_RETURNED_JSON_CHARS

MAX_RESULT_PIPE_BYTES = MAX_RETURNED_JSON_CHARS + 1024
"""Bytes read from the result pipe before the child is stopped: the child's own cap on the
returned value (ASCII JSON: one byte a character) plus the envelope around it."""
PRINTED_KEPT_BYTES = 64 * 1024
"""Bytes of the output pipe (what the code printed, or wrote to fd 1 and 2) kept for the outcome."""
PRINTED_READ_MAX_BYTES = 1 << 20
"""Bytes read from the output pipe before the host closes it (further writes fail in the child)."""
_KILL_GRACE_S = 5.0


@dataclass(slots=True)
class Exchange:
    """What one child produced, before classification."""

    result: bytes
    output: bytes
    output_total: int
    timed_out: bool
    result_overflow: bool
    exited: bool
    elapsed_ms: float


def exchange(child: Child, payload: bytes, timeout_s: float) -> Exchange:
    """Send ``payload`` to ``child`` and collect what it writes until it exits or the deadline."""
    start = time.monotonic()
    deadline = start + timeout_s
    os.set_blocking(child.req_w, False)
    pending = memoryview(payload)
    result, output = bytearray(), bytearray()
    output_total, overflow, exited, timed_out = 0, False, False, False
    poller = select.poll()
    poller.register(child.req_w, select.POLLOUT)
    poller.register(child.res_r, select.POLLIN)
    poller.register(child.log_r, select.POLLIN)
    poller.register(child.pidfd, select.POLLIN)
    open_reads = {child.res_r, child.log_r}
    # Done only when the child has exited: a result alone does not prove its threads are gone.
    while open_reads or not exited:
        left = deadline - time.monotonic()
        if left <= 0:
            timed_out = True
            break
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
                chunk = os.read(fd, 1 << 16)
                result += chunk
                if not chunk or len(result) > MAX_RESULT_PIPE_BYTES:
                    overflow = len(result) > MAX_RESULT_PIPE_BYTES
                    poller.unregister(fd)
                    open_reads.discard(fd)
                    if overflow:
                        open_reads.clear()  # nothing more worth reading: stop it now
                        exited = exited or _kill(child)
            else:
                chunk = os.read(fd, 1 << 16)
                output_total += len(chunk)
                if len(output) < PRINTED_KEPT_BYTES:
                    output += chunk[:PRINTED_KEPT_BYTES - len(output)]
                if not chunk or output_total >= PRINTED_READ_MAX_BYTES:
                    # Closing our end makes further writes fail with EPIPE in the child.
                    poller.unregister(fd)
                    open_reads.discard(fd)
                    os.close(fd)
                    child.log_r = -1
    if not exited:
        exited = _kill(child)
    return Exchange(bytes(result), bytes(output), output_total, timed_out, overflow, exited,
                    (time.monotonic() - start) * 1000)


def _kill(child: Child) -> bool:
    """SIGKILL the child and wait (bounded) until it has exited; True once it has."""
    try:
        signal.pidfd_send_signal(child.pidfd, signal.SIGKILL)
    except ProcessLookupError:
        return True
    ready = select.select([child.pidfd], [], [], _KILL_GRACE_S)[0]
    return bool(ready)
