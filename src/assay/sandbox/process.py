"""Run a grader program as a child process: its own process group, a wall-clock limit that
kills the whole group, and capped capture of stdout (head) and stderr (tail).

The real ``ProcessRunner`` behind the ``program`` and ``script`` graders. Programs are trusted
operator tooling, so they are not confined like evaluator code; they still get the limits.
"""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import threading
from time import perf_counter

from assay.core.interfaces import ProcessCall, ProcessOutcome

_CHUNK = 65536


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


def _drain(stream, sink) -> None:  # noqa: ANN001  a binary pipe and a _Head/_Tail
    try:
        while chunk := stream.read1(_CHUNK):
            sink.feed(chunk)
    except (OSError, ValueError):
        pass
    finally:
        try:
            stream.close()
        except OSError:
            pass


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class LocalProcessRunner:
    """Runs processes on this machine (POSIX)."""

    def run(self, call: ProcessCall) -> ProcessOutcome:
        argv = ["/bin/sh", "-c", " ".join(call.argv)] if call.shell else list(call.argv)
        out = ProcessOutcome(argv=list(call.argv))
        start = perf_counter()
        try:
            proc = subprocess.Popen(
                argv, cwd=call.cwd, env=call.env,
                stdin=subprocess.PIPE if call.stdin is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                start_new_session=True,  # own process group: a timeout kills children too
                close_fds=True,
            )
        except OSError as exc:
            code = errno.errorcode.get(exc.errno or 0, "EUNKNOWN")
            out.spawn_error = code
            out.spawn_message = exc.strerror or str(exc)
            out.duration_ms = (perf_counter() - start) * 1000.0
            return out

        head, tail = _Head(call.stdout_limit), _Tail(call.stderr_limit)
        readers = [threading.Thread(target=_drain, args=(proc.stdout, head), daemon=True),
                   threading.Thread(target=_drain, args=(proc.stderr, tail), daemon=True)]
        for t in readers:
            t.start()
        if call.stdin is not None:
            threading.Thread(target=_feed_stdin, args=(proc.stdin, call.stdin), daemon=True).start()
        try:
            proc.wait(timeout=call.timeout_s)
        except subprocess.TimeoutExpired:
            out.timed_out = True
            _kill_group(proc.pid)
            proc.wait()
        # Orphans left in the group would hold the pipes open; the grader owns them, so end them.
        _kill_group(proc.pid)
        for t in readers:
            t.join(timeout=5)
        out.returncode = proc.returncode
        out.stdout, out.stdout_truncated = head.value(), head.truncated
        out.stderr, out.stderr_truncated = tail.value(), tail.truncated
        out.duration_ms = (perf_counter() - start) * 1000.0
        return out


def _feed_stdin(pipe, data: bytes) -> None:  # noqa: ANN001
    try:
        pipe.write(data)
    except (BrokenPipeError, OSError, ValueError):
        pass  # the child need not read its input
    finally:
        try:
            pipe.close()
        except OSError:
            pass
