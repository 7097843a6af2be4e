"""Run a grader program as a child process: a wall-clock limit, capped capture of stdout
(head) and stderr (tail), and nothing of it left running afterwards.

The real ``ProcessRunner`` behind the ``program`` and ``script`` graders. Programs are trusted
operator tooling, so they are not confined like evaluator code; they still get the limits:

- Containment. On Linux the program runs under a small launcher (``_reaper.py``), a child
  subreaper that, once the program has exited or the limit is reached, kills and reaps every
  descendant, including those that called ``setsid()`` or double-forked. Where this process
  may make cgroup v2 groups, each run also gets one and ``cgroup.kill`` ends the tree at once.
  Elsewhere the program gets its own process group, and that group is killed.
- Time. Reading stops at the limit, not at EOF, so a descendant holding the pipes open cannot
  hold the grade: a call returns within ``timeout_s`` plus about ``_GRACE_S``.
"""

from __future__ import annotations

import errno
import os
import selectors
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping
from pathlib import Path
from time import perf_counter
from typing import IO, Literal

from assay.core.interfaces import ProcessCall, ProcessOutcome
from assay.sandbox._cgroup import find_parent, kill_group, make_group, remove_group

_CHUNK = 65536
_GRACE_S = 0.5
"""After the program ended or was killed: how long the pipes may still be drained."""
_TICK_S = 0.02
"""How often exit is polled where ``pidfd_open`` is missing."""
_REAPER = str(Path(__file__).with_name("_reaper.py"))

Containment = Literal["auto", "reaper", "group"]


class _Head:
    """Keeps the first ``limit`` bytes of a stream and drains the rest."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.parts: list[bytes] = []
        self.size = 0
        self.truncated = False

    def feed(self, chunk: bytes) -> None:
        room = self.limit - self.size
        if room > 0:
            self.parts.append(chunk[:room])
            self.size += min(room, len(chunk))
        if len(chunk) > room:
            self.truncated = True

    def value(self) -> bytes:
        return b"".join(self.parts)


class _Tail:
    """Keeps the last ``limit`` bytes of a stream: the end of stderr says what went wrong."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.buf = bytearray()
        self.truncated = False

    def feed(self, chunk: bytes) -> None:
        self.buf += chunk
        if len(self.buf) > self.limit:
            del self.buf[: len(self.buf) - self.limit]
            self.truncated = True

    def value(self) -> bytes:
        return bytes(self.buf)


SCRUBBED_KEEP = ("PATH", "HOME", "LANG", "TMPDIR")
"""What a scrubbed environment (``ProcessCall.scrub_env``) keeps of the inherited one."""


def child_env(call: ProcessCall, inherited: Mapping[str, str]) -> dict[str, str]:
    """The environment ``call`` runs in: ``inherited`` (or, scrubbed, its ``SCRUBBED_KEEP``)
    with the call's ``env`` over it."""
    env = {k: inherited[k] for k in SCRUBBED_KEEP if k in inherited} if call.scrub_env else dict(inherited)
    env.update(call.env)
    return env


class LocalProcessRunner:
    """Runs processes on this machine (POSIX).

    ``containment``: ``auto`` runs each program under the subreaper launcher on Linux, in its
    own cgroup v2 group where one can be made; ``reaper`` uses the launcher without cgroups;
    ``group`` only kills the program's process group (what other systems get: descendants
    that leave the group may survive). ``environ``: what the programs inherit (the settings'
    ``environ``), under each call's ``env``.
    """

    def __init__(self, containment: Containment = "auto", *, environ: Mapping[str, str]) -> None:
        self.environ = dict(environ)
        if containment != "group" and not (sys.platform == "linux" and sys.executable
                                           and os.path.isdir("/proc/self")):
            containment = "group"
        self.containment: Containment = containment
        self._cgroup_parent: str | None = None
        self._probed = containment != "auto"
        self._lock = threading.Lock()

    def cgroup_parent(self) -> str | None:
        """The cgroup under which runs get their own group, or None (found once, then kept)."""
        with self._lock:
            if not self._probed:
                self._cgroup_parent = find_parent()
                self._probed = True
        return self._cgroup_parent

    def run(self, call: ProcessCall) -> ProcessOutcome:
        start = perf_counter()
        parent = self.cgroup_parent()
        cgroup = make_group(parent) if parent else None
        try:
            try:
                proc, status_fd = self._spawn(call, cgroup)
            except OSError as exc:
                return ProcessOutcome(argv=list(call.argv), spawn_error=errno.errorcode.get(exc.errno or 0, "EUNKNOWN"),
                                      spawn_message=exc.strerror or str(exc),
                                      duration_ms=(perf_counter() - start) * 1000.0)
            return _Run(call, proc, status_fd, cgroup, start).supervise()
        finally:
            if cgroup:
                remove_group(cgroup)

    def _spawn(self, call: ProcessCall, cgroup: str | None) -> tuple[subprocess.Popen[bytes], int | None]:
        program = ["/bin/sh", "-c", " ".join(call.argv)] if call.shell else list(call.argv)

        def popen(argv: list[str], pass_fds: tuple[int, ...] = ()) -> subprocess.Popen[bytes]:
            return subprocess.Popen(argv, cwd=call.cwd, env=child_env(call, self.environ),
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                    stdin=subprocess.PIPE if call.stdin is not None else subprocess.DEVNULL,
                                    start_new_session=True, close_fds=True, pass_fds=pass_fds)

        if self.containment == "group":
            return popen(program), None
        status_r, status_w = os.pipe()
        try:
            argv = [sys.executable, "-I", "-S", _REAPER, str(status_w), cgroup or "-", str(os.getpid()),
                    "--", *program]
            return popen(argv, pass_fds=(status_w,)), status_r
        except BaseException:
            os.close(status_r)
            raise
        finally:
            os.close(status_w)


def pipe(stream: IO[bytes] | None) -> IO[bytes]:
    """A ``Popen`` stream that was opened with ``PIPE`` (``subprocess`` types every stream as optional)."""
    if stream is None:
        raise RuntimeError("the process's stream was not opened as a pipe")
    return stream


class _Run:
    """One started process, watched from the calling thread until it and its pipes are done."""

    def __init__(self, call: ProcessCall, proc: subprocess.Popen[bytes], status_fd: int | None,
                 cgroup: str | None, start: float) -> None:
        self.call, self.proc, self.cgroup, self.start = call, proc, cgroup, start
        self.launcher = status_fd is not None
        self.head, self.tail, self.status = _Head(call.stdout_limit), _Tail(call.stderr_limit), _Head(4096)
        self.exited = self.timed_out = False
        self.stdin = memoryview(call.stdin or b"")
        self.status_fd = status_fd
        self.pidfd: int | None = None
        self.sel = selectors.DefaultSelector()

    def supervise(self) -> ProcessOutcome:
        try:
            self._watch_all()
            self._loop()
        finally:
            self._finish()
        return self._outcome()

    def _watch_all(self) -> None:
        proc = self.proc
        self._watch(pipe(proc.stdout).fileno(), selectors.EVENT_READ, lambda fd: self._read(fd, self.head))
        self._watch(pipe(proc.stderr).fileno(), selectors.EVENT_READ, lambda fd: self._read(fd, self.tail))
        if self.status_fd is not None:
            self._watch(self.status_fd, selectors.EVENT_READ, lambda fd: self._read(fd, self.status))
        if proc.stdin is not None:
            self._watch(proc.stdin.fileno(), selectors.EVENT_WRITE, self._write)
        try:  # a pidfd wakes the loop the moment the process ends
            self.pidfd = pidfd = os.pidfd_open(proc.pid)
        except (AttributeError, OSError):
            return
        self.sel.register(pidfd, selectors.EVENT_READ, lambda fd: self._on_exit())

    def _loop(self) -> None:
        deadline = self.start + self.call.timeout_s
        stop_at: float | None = None  # past it, reading ends whatever the pipes do
        while True:
            now = perf_counter()
            if not self.exited and self.pidfd is None and _has_exited(self.proc.pid):
                self._on_exit()
            if not self.exited and not self.timed_out and now >= deadline:
                self.timed_out = True
                self._stop()
                stop_at = now + _GRACE_S
            if self.exited and stop_at is None:
                stop_at = now + _GRACE_S
            # Once it has exited, the pidfd is unwatched: what is left to read is the pipes.
            drained = self.exited and not any(k.events & selectors.EVENT_READ for k in self.sel.get_map().values())
            if drained or (stop_at is not None and now >= stop_at):
                return
            wait = (deadline if stop_at is None else stop_at) - now
            if self.pidfd is None and not self.exited:
                wait = min(wait, _TICK_S)
            for key, _ in self.sel.select(max(wait, 0.0)):
                key.data(key.fd)

    def _on_exit(self) -> None:
        """The watched process has ended (not yet reaped, so its pid and group are still ours)."""
        self.exited = True
        if self.pidfd is not None:
            self.sel.unregister(self.pidfd)
        # Whatever is left in its group or cgroup is an orphan the grader owns: end it.
        _kill_group(self.proc.pid)
        if self.cgroup:
            kill_group(self.cgroup)
        self.proc.wait()

    def _stop(self) -> None:
        """The time limit: end the program and everything it started."""
        if self.cgroup:
            kill_group(self.cgroup)
        if self.launcher:
            # The launcher kills and reaps every descendant, then exits.
            _signal(self.proc.pid, signal.SIGTERM)
        else:
            _kill_group(self.proc.pid)

    def _finish(self) -> None:
        if not self.exited:  # the launcher did not finish in time (or we were interrupted)
            _kill_group(self.proc.pid)
            if self.cgroup:
                kill_group(self.cgroup)
            try:
                self.proc.wait(timeout=2)
            except subprocess.TimeoutExpired:
                pass
        if self.status_fd is not None and self.status_fd in self.sel.get_map():
            self._read(self.status_fd, self.status)  # the launcher is gone: all it wrote is there
        self.sel.close()
        for fd in (self.status_fd, self.pidfd):
            if fd is not None:
                os.close(fd)
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if stream is not None:
                try:
                    stream.close()
                except OSError:
                    pass

    def _outcome(self) -> ProcessOutcome:
        out = ProcessOutcome(argv=list(self.call.argv), timed_out=self.timed_out,
                             returncode=self.proc.returncode)
        for line in self.status.value().splitlines():
            kind, _, number = line.partition(b" ")
            if kind == b"E" and number.isdigit():
                code = int(number)
                out.spawn_error = errno.errorcode.get(code, "EUNKNOWN")
                out.spawn_message = os.strerror(code)
            elif kind == b"W" and number.isdigit():
                out.returncode = os.waitstatus_to_exitcode(int(number))
        out.stdout, out.stdout_truncated = self.head.value(), self.head.truncated
        out.stderr, out.stderr_truncated = self.tail.value(), self.tail.truncated
        out.duration_ms = (perf_counter() - self.start) * 1000.0
        return out

    # -- pipes

    def _watch(self, fd: int, events: int, handler: Callable[[int], None]) -> None:
        os.set_blocking(fd, False)
        self.sel.register(fd, events, handler)

    def _read(self, fd: int, sink: _Head | _Tail) -> None:
        try:
            chunk = os.read(fd, _CHUNK)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if chunk:
            sink.feed(chunk)
        else:
            self.sel.unregister(fd)

    def _write(self, fd: int) -> None:
        try:
            sent = os.write(fd, self.stdin[:_CHUNK]) if self.stdin else 0
        except BlockingIOError:
            return
        except OSError:  # EPIPE: the program need not read its input
            sent, self.stdin = 0, memoryview(b"")
        self.stdin = self.stdin[sent:]
        if not self.stdin:
            self.sel.unregister(fd)
            try:
                pipe(self.proc.stdin).close()  # EOF for the program
            except OSError:
                pass


def _has_exited(pid: int) -> bool:
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True


def _signal(pid: int, sig: int) -> None:
    try:
        os.kill(pid, sig)
    except (ProcessLookupError, PermissionError):
        pass


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
