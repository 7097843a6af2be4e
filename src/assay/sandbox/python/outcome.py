"""Turn what a child left behind (result bytes, output, wait status) into a ``CodeOutcome``."""

from __future__ import annotations

import os
import signal
from typing import Any

import orjson

from assay.core.interfaces import CodeOutcome
from assay.core.result import ErrorCode
from assay.sandbox.python.session import Exchange

_CODES = {code.value: code for code in ErrorCode}
_OUTPUT_IN_REPORT = 4096


def classify(ex: Exchange, status: int | None, timeout_ms: int, memory_mb: int) -> CodeOutcome:
    """Map one exchange to an outcome. ``status`` is the child's wait status (None if unknown)."""
    if ex.timed_out:
        return _failed(ex, ErrorCode.TIMEOUT, f"the evaluator ran longer than {timeout_ms} ms and was stopped")
    if ex.result_overflow:
        return _failed(ex, ErrorCode.INVALID_OUTPUT, "the evaluator wrote more than 1 MiB of result")
    if ex.result:
        parsed = _parse(ex.result)
        if isinstance(parsed, str):
            return _failed(ex, ErrorCode.INVALID_OUTPUT, parsed)
        if "value" in parsed and len(parsed) == 1:
            return CodeOutcome(value=parsed["value"], duration_ms=ex.elapsed_ms, output=_printed(ex))
        code = _CODES.get(parsed.get("error"))  # type: ignore[arg-type]
        message = parsed.get("message")
        if code is None or not isinstance(message, str):
            return _failed(ex, ErrorCode.INVALID_OUTPUT, "the evaluator wrote a malformed result")
        trace = parsed.get("traceback")
        return _failed(ex, code, message, trace if isinstance(trace, str) else None)
    return _no_result(ex, status, memory_mb)


def _no_result(ex: Exchange, status: int | None, memory_mb: int) -> CodeOutcome:
    """The child died without a word: say why from its wait status and its last output."""
    said = ex.output[-_OUTPUT_IN_REPORT:].decode("utf-8", "replace")
    if "MemoryError" in said or "Cannot allocate memory" in said:
        return _failed(ex, ErrorCode.MEMORY, f"the evaluator ran out of memory (limit {memory_mb} MB)")
    if status is not None and os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        name = _signal_name(sig)
        if sig == signal.SIGXCPU:
            return _failed(ex, ErrorCode.TIMEOUT, "the evaluator used up its CPU time limit")
        if sig == signal.SIGSYS:
            return _failed(ex, ErrorCode.SANDBOX_VIOLATION,
                           "the evaluator made a system call the sandbox forbids and was killed (SIGSYS)")
        if sig == signal.SIGKILL:
            return _failed(ex, ErrorCode.MEMORY,
                           f"the evaluator was killed (SIGKILL), most likely for memory (limit {memory_mb} MB)")
        if sig == signal.SIGSEGV:
            return _failed(ex, ErrorCode.RUNTIME_ERROR,
                           "the evaluator crashed (SIGSEGV), most often a stack overflow from deep recursion")
        return _failed(ex, ErrorCode.RUNTIME_ERROR, f"the evaluator crashed ({name})")
    code = os.WEXITSTATUS(status) if status is not None and os.WIFEXITED(status) else None
    return _failed(ex, ErrorCode.RUNTIME_ERROR,
                   f"the evaluator exited without a result (exit status {code})" if code is not None
                   else "the evaluator ended without a result")


def _parse(data: bytes) -> dict[str, Any] | str:
    """Strict JSON: finite numbers, valid UTF-8, no lone surrogates, bounded depth."""
    try:
        parsed = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        return f"the evaluator's result is not valid JSON data ({str(exc).split(':')[0]})"
    if not isinstance(parsed, dict):
        return "the evaluator wrote a malformed result"
    return parsed


def _failed(ex: Exchange, code: ErrorCode, message: str, trace: str | None = None) -> CodeOutcome:
    return CodeOutcome(error=code, message=message, traceback=trace, duration_ms=ex.elapsed_ms, output=_printed(ex))


def _printed(ex: Exchange) -> str | None:
    """The start of what the evaluator printed, marked when cut."""
    if not ex.output:
        return None
    shown = ex.output[:_OUTPUT_IN_REPORT].decode("utf-8", "replace")
    if ex.output_total > _OUTPUT_IN_REPORT:
        shown += f"\n[... first {_OUTPUT_IN_REPORT} of {ex.output_total} bytes]"
    return shown


def _signal_name(sig: int) -> str:
    try:
        return signal.Signals(sig).name
    except ValueError:
        return f"signal {sig}"
