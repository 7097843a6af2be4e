"""The forked evaluation process: confine itself, read one request, run it, write one result.

Runs in a child of the zygote and never returns (``os._exit``). Every layer is applied
*before* the request is read, so the tenant's code and data only ever exist in a confined
process; the zygote never sees them (the host writes straight into this child's pipe).
Result on the result pipe: ``{"value": v}`` or ``{"error": code, "message": m, "traceback": t}``.
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
import traceback
import types
from typing import Any

from assay.core.source import FILENAME, compile_python
from assay.core.untrusted import MAX_DEPTH, clean_text
from assay.sandbox.confine import Confinement, apply_in_child
from assay.sandbox.results import MAX_PRINTED_CHARS, MAX_RETURNED_JSON_CHARS, cap_message

MAX_TRACEBACK_CHARS = 8000  # the child's own cut (middle dropped); the host caps again
EXIT_CONFINE_FAILED = 71
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
        _write_all(res_fd, json.dumps({"error": "unavailable",
                                       "message": f"sandbox confinement failed: {exc}"}).encode())
        os._exit(EXIT_CONFINE_FAILED)
    code = 0
    printed = sys.stdout = sys.stderr = _Printed(sys.stdout)
    try:
        request = json.loads(_read_all(req_fd))
        os.close(req_fd)
        _lower_limits(base_vm, request["memory_mb"], request["timeout_ms"])
        payload = _evaluate(request, user_builtins)
    except BaseException as exc:  # noqa: BLE001 - the interpreter itself is in trouble
        payload, code = _last_words(exc), 1
    try:
        printed.finish()
    except BaseException:  # noqa: BLE001 - the host may have closed an overlong log
        pass
    try:
        _write_all(res_fd, payload)
    finally:
        os._exit(code)


def _evaluate(request: dict[str, Any], user_builtins: dict[str, Any]) -> bytes:
    outcome = _call_user(request, user_builtins)  # the exception and its frames are gone here
    if "value" not in outcome:
        return json.dumps(outcome).encode()
    # Written and measured as the Node.js harness (bootstrap.js) does, with the same messages.
    try:
        data = json.dumps(outcome["value"], separators=(",", ":"))
    except ValueError as exc:
        if "Circular" in str(exc):
            return _error("invalid_output", "the returned value contains a reference cycle (a circular structure)")
        return _error("invalid_output", f"the returned value is not JSON data: {exc}")
    except TypeError as exc:
        return _error("invalid_output", f"the returned value is not JSON data: {exc}")
    except RecursionError:
        return _error("invalid_output", f"the returned value is nested more than {MAX_DEPTH} levels deep")
    if len(data) > MAX_RETURNED_JSON_CHARS:  # ensure_ascii: characters are bytes, lone surrogates stay escaped
        return _error("invalid_output", f"the returned value is too large: {len(data)} characters of JSON, "
                                        f"more than the limit of {MAX_RETURNED_JSON_CHARS}")
    return b'{"value":' + data.encode() + b"}"


def _call_user(request: dict[str, Any], user_builtins: dict[str, Any]) -> dict[str, Any]:
    source, function = request["source"], request["function"]
    try:
        linecache.cache[FILENAME] = (len(source), None, source.splitlines(True), FILENAME)
        module = types.ModuleType("evaluator")
        module.__dict__["__builtins__"] = user_builtins
        exec(compile_python(source), module.__dict__)
        fn = module.__dict__.get(function)
        if not callable(fn):
            return {"error": "runtime_error", "message": f"the code defines no function `{function}`"}
        value = fn(*request["args"])
        if inspect.isawaitable(value):
            value = asyncio.run(_await(value))
        return {"value": value}
    except MemoryError:
        return {"error": "memory", "message": f"out of memory (limit {request['memory_mb']} MB)"}
    except SystemExit as exc:
        return {"error": "runtime_error", "message": f"the evaluator called exit({exc.code!r})"}
    except BaseException as exc:  # noqa: BLE001 - every user failure becomes a value
        gc.collect()  # free what the failed code held before formatting the report
        return {"error": "runtime_error", "message": _describe(exc), "traceback": _user_traceback(exc)}


async def _await(awaitable: Any) -> Any:
    return await awaitable


def _describe(exc: BaseException) -> str:
    text = "".join(traceback.format_exception_only(type(exc), exc)).strip()
    if isinstance(exc, PermissionError):
        text += " (denied by the sandbox: no files, network, processes or signals)"
    return cap_message(text)


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
    go to the output pipe and the rest is only counted, so that printing a lot neither fails
    nor floods the host; ``finish`` notes the cut the way Node.js evaluators' console does."""

    def __init__(self, stream: io.TextIOBase) -> None:
        self._stream = stream
        self._total = 0

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self._stream.encoding

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        room = MAX_PRINTED_CHARS - self._total
        self._total += len(text)
        if room > 0:
            self._stream.write(clean_text(text[:room]))  # a lone surrogate would fail to encode
        return len(text)

    def flush(self) -> None:
        self._stream.flush()

    def finish(self) -> None:
        if self._total > MAX_PRINTED_CHARS:
            self._stream.write(f"\n[... first {MAX_PRINTED_CHARS} of {self._total} characters]")
        self._stream.flush()


def _last_words(exc: BaseException) -> bytes:
    """A report for a failure outside the user's own frames (memory gone, interpreter errors)."""
    try:
        if isinstance(exc, MemoryError):
            return _error("memory", "out of memory while reporting the evaluator's result")
        return _error("runtime_error", f"the evaluator broke the interpreter: {type(exc).__name__}: {exc}"[:500])
    except BaseException:  # noqa: BLE001
        return _FALLBACK


def _error(code: str, message: str) -> bytes:
    return json.dumps({"error": code, "message": message}).encode()


def _lower_limits(base_vm: int, memory_mb: int, timeout_ms: int) -> None:
    """Per-request limits: the address space the zygote already uses plus ``memory_mb``."""
    limit = base_vm + memory_mb * 2**20
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    cpu = math.ceil(timeout_ms / 1000) + 1  # a backstop: the host's wall-clock deadline comes first
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))


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
