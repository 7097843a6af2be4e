"""Run a grader program as a child process: its own process group, a wall-clock limit that
kills the whole group, and capped capture of stdout (head) and stderr (tail).

Shared by the ``program`` and ``script`` graders. ``LocalProcessRunner`` is the real
adapter; a grader takes the runner from ``Resources.extra["process_runner"]`` when one is
given there (tests may pass a fake), else uses ``LOCAL_RUNNER``.
"""

from __future__ import annotations

import errno
import os
import re
import signal
import subprocess
import threading
from dataclasses import dataclass, field
from time import perf_counter
from typing import Protocol

DEFAULT_STDOUT_LIMIT = 1 << 20
DEFAULT_STDERR_LIMIT = 64 << 10
_CHUNK = 65536


@dataclass(frozen=True, slots=True)
class ProcessCall:
    """One child process to run.

    ``argv`` is executed directly, or, with ``shell``, joined by spaces and given to
    ``/bin/sh -c`` (the way Node's ``spawn(cmd, args, {shell: true})`` does it).
    """

    argv: list[str]
    cwd: str
    env: dict[str, str]
    timeout_s: float
    shell: bool = False
    stdin: bytes | None = None
    stdout_limit: int = DEFAULT_STDOUT_LIMIT
    stderr_limit: int = DEFAULT_STDERR_LIMIT


@dataclass(slots=True)
class ProcessOutcome:
    """What happened. ``spawn_error`` names the errno (``ENOENT``) when the program could
    not start; ``returncode`` is negative for a signal (POSIX convention)."""

    returncode: int | None = None
    stdout: bytes = b""
    stdout_truncated: bool = False
    stderr: bytes = b""
    stderr_truncated: bool = False
    timed_out: bool = False
    spawn_error: str | None = None
    spawn_message: str | None = None
    duration_ms: float = 0.0
    argv: list[str] = field(default_factory=list)

    def stderr_text(self, limit: int = 4000) -> str:
        """The last ``limit`` characters of stderr, decoded leniently."""
        text = self.stderr.decode("utf-8", errors="replace")
        return text[-limit:]


class ProcessRunner(Protocol):
    def run(self, call: ProcessCall) -> ProcessOutcome: ...


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


LOCAL_RUNNER = LocalProcessRunner()


def runner_from(extra: dict) -> ProcessRunner:
    """The process runner a grader should use: an injected one, or the local runner."""
    return extra.get("process_runner") or LOCAL_RUNNER


# Environment variables a scrubbed environment keeps from the parent.
SCRUBBED_KEEP = ("PATH", "HOME", "LANG", "TMPDIR")


def build_env(extra: dict[str, str], *, scrub: bool, base: dict[str, str] | None = None) -> dict[str, str]:
    """The child's environment: the parent's (or only PATH/HOME/LANG/TMPDIR when
    ``scrub``), with ``extra`` merged over it."""
    parent = dict(os.environ) if base is None else dict(base)
    env = {k: parent[k] for k in SCRUBBED_KEEP if k in parent} if scrub else parent
    env.update(extra)
    return env


_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(value: object) -> float:
    """A duration in seconds from ``500ms``, ``60s``, ``2m``, ``1h``, ``1m30s`` or a bare
    number of seconds. Raises ValueError naming the accepted forms."""
    if isinstance(value, bool):
        raise ValueError("a duration must be a number of seconds or text such as 60s, 2m, 500ms")
    if isinstance(value, (int, float)):
        seconds = float(value)
    elif isinstance(value, str):
        text = value.strip()
        parts = re.findall(r"(\d+(?:\.\d+)?)(ms|s|m|h)", text)
        if not parts or "".join(n + u for n, u in parts) != text.replace(" ", ""):
            raise ValueError(f"invalid duration {value!r}: use a number with a unit, e.g. 60s, 2m, 500ms")
        seconds = sum(float(n) * _UNITS[u] for n, u in parts)
    else:
        raise ValueError("a duration must be a number of seconds or text such as 60s, 2m, 500ms")
    if not seconds > 0:
        raise ValueError("a duration must be greater than zero")
    return seconds


def format_duration(seconds: float) -> str:
    if seconds < 1:
        return f"{seconds * 1000:g}ms"
    if seconds >= 60 and seconds % 60 == 0:
        return f"{seconds / 60:g}m"
    return f"{seconds:g}s"
