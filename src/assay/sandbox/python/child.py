"""The forked evaluation process: confine itself, read one chunk of samples, run the evaluator on
each in turn, write one result frame per sample.

Runs in a child of the zygote and never returns (``os._exit``). Every layer is applied
*before* the request is read, so the tenant's code and data only ever exist in a confined
process; the zygote never sees them (the host writes straight into this child's pipe).
Every sample gets a fresh module (globals and a copy of the builtins), its own printed-output
cap, CPU seconds and memory (``memory_mb`` above what the process and the chunk already hold).
After a sample that ran out of memory or left a thread running, the child stops (``frames``).
A frame holds ``{"value": v}`` or ``{"error": code, "message": m, "traceback": t}``.
The value is written as the standard library writes it (``NaN`` and big integers included): the
host normalises it (``sandbox.results``), the same way as a Node.js evaluator's.
"""

from __future__ import annotations

import asyncio
import gc
import inspect
import io
import json
import linecache
import math
import os
import resource
import sys
import time
import traceback
import types
from _thread import _count as _threads  # bound here: a sample may rebind _thread._count
from typing import Any

import orjson

from assay.core.source import FILENAME, compile_python
from assay.core.untrusted import MAX_DEPTH, clean_text
from assay.sandbox.confine import Confinement, apply_in_child
from assay.sandbox.python.frames import FRAME_HEAD, STOP_FLAG
from assay.sandbox.results import (
    CYCLE,
    DENIED,
    EXIT_CALLED,
    MAX_PRINTED_CHARS,
    MAX_RETURNED_JSON_CHARS,
    NO_FUNCTION,
    NOT_JSON_DATA,
    OUT_OF_MEMORY,
    TOO_DEEP,
    TOO_LARGE,
    cap_message,
    left_running,
    orjson_exact,
    phrase_of,
)

MAX_TRACEBACK_CHARS = 8000  # the child's own cut (middle dropped); the host caps again
EXIT_CONFINE_FAILED = 71
_ENCODE = json.JSONEncoder(separators=(",", ":")).encode  # json.dumps would build one per call
# Built in the zygote: reporting a failure must not need memory the evaluation used up.
_FALLBACK = b'{"error": "runtime_error", "message": "the evaluator failed and its error could not be reported"}'


def run(req_fd: int, res_fd: int, log_fd: int, confinement: Confinement, zygote_pid: int,
        base_vm: int, user_builtins: dict[str, Any]) -> None:
    """Entry point right after ``fork()`` in the zygote; never returns."""
    try:
        os.setsid()
        os.dup2(log_fd, 1)
        os.dup2(log_fd, 2)
        _close_fds_except({0, 1, 2, req_fd, res_fd})
        apply_in_child(confinement)
        if os.getppid() != zygote_pid:  # the zygote died before the parent-death signal was set
            os._exit(EXIT_CONFINE_FAILED)
    except BaseException as exc:  # noqa: BLE001 - report and stop: nothing may run unconfined
        _write_frame(res_fd, json.dumps({"error": "unavailable",
                                         "message": f"sandbox confinement failed: {exc}"}).encode(), True)
        os._exit(EXIT_CONFINE_FAILED)
    printed = sys.stdout = sys.stderr = _Printed()
    warm(user_builtins)
    printed.take()
    try:
        header, samples = _read_request(req_fd)
        held = sum(len(s) for s in samples) + 64 * len(samples)  # the chunk's other samples, as bytes
        cpu = math.ceil(header["timeout_ms"] / 1000) + 1  # a backstop: the host's wall clock comes first
        _lower_limits(base_vm + held, header["memory_mb"], cpu * len(samples) + 1)
    except BaseException as exc:  # noqa: BLE001 - the interpreter itself is in trouble
        _finish(printed, res_fd, _last_words(exc), True)
        os._exit(1)
    for i, raw in enumerate(samples):
        samples[i] = b""
        if _threads() > 0:  # a thread started by the previous sample got going after it ended
            _write_frame(res_fd, b"", True)  # no result: a fresh child takes it from here
            break
        sys.stdout = sys.stderr = printed  # whatever the previous sample set them to
        try:
            _cpu_for_next(cpu)
            payload, stop, timers = _evaluate(header, _load_args(raw), user_builtins)
            threads = _threads()
            stop = stop or threads > 0  # a thread the code left running must not meet the next sample
            if timers:
                printed.note(left_running(timers, "timer"))
            if threads:
                printed.note(left_running(threads, "thread"))
        except BaseException as exc:  # noqa: BLE001 - the interpreter itself is in trouble
            payload, stop = _last_words(exc), True
        _finish(printed, res_fd, payload, stop or i == len(samples) - 1)
        if stop:
            break
    os._exit(0)


_WARM_SOURCE = "def evaluate(input, output, expected, metadata):\n    return {'passed': output == expected}\n"


def warm(user_builtins: dict[str, Any]) -> None:
    """Run a trivial evaluation of our own: in the zygote, it fills the caches a first run
    fills (type attribute caches, shared dict keys); in a waiting child, it copies the pages
    an evaluation writes (reference counts: a forked child copies each page it touches) before
    the request arrives instead of while the sample waits."""
    header = {"source": _WARM_SOURCE, "function": "evaluate", "memory_mb": 1, "timeout_ms": 1}
    _evaluate(header, _load_args(b'["q","a","a",{"k":[1,2.5,null,true]}]'), user_builtins)
    _cpu_for_next(1)


def _read_request(fd: int) -> tuple[dict[str, Any], list[bytes]]:
    """The request: a JSON header line, then one JSON line of arguments per sample."""
    data = _read_all(fd)
    os.close(fd)
    head, _, rest = data.partition(b"\n")
    del data
    return json.loads(head), rest.split(b"\n")


def _load_args(raw: bytes) -> Any:
    """One sample's arguments; the standard parser for what orjson refuses (integers past 64
    bits, lone surrogate escapes), so that both read the same values."""
    if orjson_exact(raw):
        try:
            return orjson.loads(raw)
        except orjson.JSONDecodeError:
            pass
    return json.loads(raw)


def _finish(printed: _Printed, res_fd: int, payload: bytes, stop: bool) -> None:
    """Write the sample's frame: what it printed, and its result."""
    _write_frame(res_fd, payload, stop, printed.take())


def _write_frame(fd: int, payload: bytes, stop: bool, printed: bytes = b"") -> None:
    """One frame (``frames``): the head, what the sample printed, its result envelope."""
    _write_all(fd, FRAME_HEAD.pack(len(payload) | (STOP_FLAG if stop else 0), len(printed)) + printed + payload)


def _evaluate(header: dict[str, Any], args: list[Any], user_builtins: dict[str, Any]) -> tuple[bytes, bool, int]:
    """One sample's result envelope, whether the process must stop after it (memory ran out),
    and how many timers or tasks its event loop still had when it returned."""
    outcome = _call_user(header, args, dict(user_builtins))  # the exception and its frames are gone here
    if "value" not in outcome:
        return json.dumps(outcome).encode(), outcome["error"] == "memory", 0
    return (*_envelope(outcome["value"]), outcome.get("pending", 0))


def _envelope(value: Any) -> tuple[bytes, bool]:
    """The result envelope of a returned value (or why it cannot be one), and False: a value
    never stops the process."""
    # Written and measured as the Node.js harness (bootstrap.js) does, with the same messages.
    try:
        data = _ENCODE(value)
    except ValueError as exc:
        if "Circular" in str(exc):
            return _error("invalid_output", CYCLE()), False
        return _error("invalid_output", NOT_JSON_DATA(problem=str(exc))), False
    except TypeError as exc:
        return _error("invalid_output", NOT_JSON_DATA(problem=str(exc))), False
    except RecursionError:
        return _error("invalid_output", TOO_DEEP(depth=MAX_DEPTH)), False
    if len(data) > MAX_RETURNED_JSON_CHARS:  # ensure_ascii: characters are bytes, lone surrogates stay escaped
        return _error("invalid_output", TOO_LARGE(size=len(data), limit=MAX_RETURNED_JSON_CHARS)), False
    return b'{"value":' + data.encode() + b"}", False


def _call_user(header: dict[str, Any], args: list[Any], user_builtins: dict[str, Any]) -> dict[str, Any]:
    """Run the evaluator on one sample in a fresh module (fresh globals and builtins)."""
    source, function = header["source"], header["function"]
    try:
        linecache.cache[FILENAME] = (len(source), None, source.splitlines(True), FILENAME)
        module = types.ModuleType("evaluator")
        module.__dict__["__builtins__"] = user_builtins
        exec(_compiled(source), module.__dict__)
        fn = module.__dict__.get(function)
        if not callable(fn):
            return _failure("runtime_error", NO_FUNCTION(function=function))
        value = fn(*args)
        if inspect.isawaitable(value):
            value, pending = asyncio.run(_await(value))
            return {"value": value, "pending": pending}
        return {"value": value}
    except MemoryError:
        return _failure("memory", OUT_OF_MEMORY(mb=header["memory_mb"]))
    except SystemExit as exc:
        return _failure("runtime_error", EXIT_CALLED(code=repr(exc.code)))
    except BaseException as exc:  # noqa: BLE001 - every user failure becomes a value
        gc.collect()  # free what the failed code held before formatting the report
        return {**_failure("runtime_error", _describe(exc)), "traceback": _user_traceback(exc)}


def _compiled(source: str, _cache: dict[str, types.CodeType] = {}) -> types.CodeType:  # noqa: B006 - the cache
    """The source compiled once per child (every sample of a chunk runs the same code object)."""
    code = _cache.get(source)
    if code is None:
        code = _cache[source] = compile_python(source)
    return code


async def _await(awaitable: Any) -> tuple[Any, int]:
    """The awaited value, and how many timers and tasks the event loop still had (asyncio.run
    then cancels them)."""
    value = await awaitable
    loop = asyncio.get_running_loop()
    pending = sum(1 for handle in getattr(loop, "_scheduled", ()) if not handle.cancelled())
    pending += sum(1 for task in asyncio.all_tasks(loop) if task is not asyncio.current_task(loop))
    return value, pending


def _describe(exc: BaseException) -> str:
    text = "".join(traceback.format_exception_only(type(exc), exc)).strip()  # the user's error, as raised
    if isinstance(exc, PermissionError):
        return cap_message(DENIED(error=text))
    return cap_message(text)


def _failure(code: str, message: str) -> dict[str, Any]:
    """A failure frame's fields: the error code, the message, and the phrase that said it."""
    phrase = phrase_of(message)
    return {"error": code, "message": message} if phrase is None else \
        {"error": code, "message": message, "phrase": phrase}


def _user_traceback(exc: BaseException) -> str:
    """The traceback restricted to the user's own frames (compiled as ``<evaluator>``)."""
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == FILENAME]
    lines = traceback.StackSummary.from_list(frames).format()
    text = "Traceback (most recent call last):\n" + "".join(lines) + "".join(
        traceback.format_exception_only(type(exc), exc))
    if len(text) > MAX_TRACEBACK_CHARS:
        text = text[:MAX_TRACEBACK_CHARS // 2] + "\n...\n" + text[-MAX_TRACEBACK_CHARS // 2:]
    return text


class _Printed(io.TextIOBase):
    """``sys.stdout`` and ``sys.stderr`` of an evaluation: the first ``MAX_PRINTED_CHARS`` characters
    are kept for the sample's frame and the rest is only counted, so that printing a lot neither
    fails nor floods the host; ``take`` notes the cut the way Node.js evaluators' console does."""

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._total = 0
        self._notes: list[str] = []

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:  # type: ignore[override]  # TextIOBase's is a read-only property; typeshed: attribute
        return "utf-8"

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        room = MAX_PRINTED_CHARS - self._total
        self._total += len(text)
        if room > 0:
            self._parts.append(clean_text(text[:room]))  # a lone surrogate would fail to encode
        return len(text)

    def flush(self) -> None:
        pass

    def note(self, line: str) -> None:
        """A line of the harness's own after what the sample printed (never cut)."""
        self._notes.append(line)

    def take(self) -> bytes:
        """What the sample printed, as UTF-8, with the note of a cut and the harness's notes; the
        next sample starts afresh."""
        if self._total > MAX_PRINTED_CHARS:
            self._parts.append(f"\n[... first {MAX_PRINTED_CHARS} of {self._total} characters]")
        if self._notes:
            self._parts.append(("\n" if self._parts and not self._parts[-1].endswith("\n") else "")
                               + "\n".join(self._notes))
        text = "".join(self._parts).encode()
        self._parts, self._total, self._notes = [], 0, []
        return text


def _last_words(exc: BaseException) -> bytes:
    """A report for a failure outside the user's own frames (memory gone, interpreter errors)."""
    try:
        if isinstance(exc, MemoryError):
            return _error("memory", "out of memory while reporting the evaluator's result")
        return _error("runtime_error", f"the evaluator broke the interpreter: {type(exc).__name__}: {exc}"[:500])
    except BaseException:  # noqa: BLE001
        return _FALLBACK


def _error(code: str, message: str) -> bytes:
    return json.dumps(_failure(code, message)).encode()


def _lower_limits(base: int, memory_mb: int, cpu_total: int) -> None:
    """The chunk's limits: the address space the zygote already uses and the chunk's own bytes
    (``base``) plus ``memory_mb`` for the sample running; CPU seconds for the whole chunk."""
    limit = base + memory_mb * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_total, cpu_total))


def _cpu_for_next(cpu: int) -> None:
    """The next sample's CPU seconds (a soft limit under the chunk's hard one): SIGXCPU past it."""
    hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
    resource.setrlimit(resource.RLIMIT_CPU, (min(hard, math.ceil(time.process_time()) + cpu), hard))


def _close_fds_except(keep: set[int]) -> None:
    start = 0
    for fd in sorted(keep):
        if fd > start:
            os.closerange(start, fd)
        start = fd + 1
    os.closerange(start, 1 << 16)


def _read_all(fd: int) -> bytes:
    chunks = []
    while chunk := os.read(fd, 1 << 16):
        chunks.append(chunk)
    return b"".join(chunks)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]
