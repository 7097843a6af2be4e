"""Turn what a child left behind (result bytes, output, wait status) into a ``CodeOutcome``."""

from __future__ import annotations

import os
import signal
from typing import Any

from assay.core.interfaces import CodeOutcome
from assay.core.messages import Phrase
from assay.core.result import ErrorCode
from assay.core.untrusted import MAX_DEPTH, cap_text
from assay.sandbox.python.session import Exchange
from assay.sandbox.results import (
    HOST_MAX_PRINTED_CHARS,
    HOST_MAX_TRACEBACK_CHARS,
    as_phrased,
    cap_message,
    load_json,
    refusal,
)

_CODES = {code.value: code for code in ErrorCode}
TIMED_OUT_DOING = Phrase("sandbox.timeout_doing", "the evaluator was still {doing} when its {ms} ms ran out, "
                                                  "and was stopped")
TIMED_OUT = Phrase("sandbox.timeout", "the evaluator was not finished when its {ms} ms ran out, and was stopped")
OVERFLOW = Phrase("sandbox.result_overflow", "the evaluator wrote more than 1 MiB of result, or a forged result frame")
MALFORMED = Phrase("sandbox.malformed_result", "the evaluator wrote a malformed result")
OUT_OF_MEMORY = Phrase("sandbox.out_of_memory", "the evaluator ran out of memory (limit {mb} MB)")
CPU_LIMIT = Phrase("sandbox.cpu_limit", "the evaluator used up its CPU time limit")
SIGSYS = Phrase("sandbox.forbidden_syscall", "the evaluator made a system call the sandbox forbids and was "
                                             "killed (SIGSYS)")
SIGKILL = Phrase("sandbox.killed", "the evaluator was killed (SIGKILL), most likely for memory (limit {mb} MB)")
SIGSEGV = Phrase("sandbox.segfault", "the evaluator crashed (SIGSEGV), most often a stack overflow from deep "
                                     "recursion")
CRASHED = Phrase("sandbox.crashed", "the evaluator crashed ({signal})")
EXITED = Phrase("sandbox.exited", "the evaluator exited without a result (exit status {status})")
ENDED = Phrase("sandbox.ended", "the evaluator ended without a result")
_LAST_WORDS = 4096  # bytes of output searched for a memory error when the child died silently


def classify(ex: Exchange, status: int | None, timeout_ms: int, memory_mb: int) -> CodeOutcome:
    """Map one exchange to an outcome. ``status`` is the child's wait status (None if unknown)."""
    if ex.timed_out:
        return _failed(ex, ErrorCode.TIMEOUT, TIMED_OUT_DOING(doing=ex.activity, ms=timeout_ms) if ex.activity
                       else TIMED_OUT(ms=timeout_ms))
    if ex.result_overflow:
        return _failed(ex, ErrorCode.INVALID_OUTPUT, OVERFLOW())
    if ex.result:
        parsed = _parse(ex.result)
        if isinstance(parsed, str):
            return _failed(ex, ErrorCode.INVALID_OUTPUT, parsed)
        if "value" in parsed and len(parsed) == 1:
            return CodeOutcome(value=parsed["value"], duration_ms=ex.elapsed_ms, output=_printed(ex))
        code = _CODES.get(str(parsed.get("error")))  # str(): a list or object is no code, not a crash
        message = parsed.get("message")
        if code is None or not isinstance(message, str):
            return _failed(ex, ErrorCode.INVALID_OUTPUT, MALFORMED())
        trace = parsed.get("traceback")
        return _failed(ex, code, as_phrased(parsed.get("phrase"), cap_message(message)),
                       cap_text(trace, HOST_MAX_TRACEBACK_CHARS) if isinstance(trace, str) else None)
    return _no_result(ex, status, memory_mb)


def _no_result(ex: Exchange, status: int | None, memory_mb: int) -> CodeOutcome:
    """The child died without a word: say why from its wait status and its last output."""
    said = ex.output[-_LAST_WORDS:].decode("utf-8", "replace")
    if "MemoryError" in said or "Cannot allocate memory" in said:
        return _failed(ex, ErrorCode.MEMORY, OUT_OF_MEMORY(mb=memory_mb))
    if status is not None and os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        name = _signal_name(sig)
        if sig == signal.SIGXCPU:
            return _failed(ex, ErrorCode.TIMEOUT, CPU_LIMIT())
        if sig == signal.SIGSYS:
            return _failed(ex, ErrorCode.SANDBOX_VIOLATION, SIGSYS())
        if sig == signal.SIGKILL:
            return _failed(ex, ErrorCode.MEMORY, SIGKILL(mb=memory_mb))
        if sig == signal.SIGSEGV:
            return _failed(ex, ErrorCode.RUNTIME_ERROR, SIGSEGV())
        return _failed(ex, ErrorCode.RUNTIME_ERROR, CRASHED(signal=name))
    code = os.WEXITSTATUS(status) if status is not None and os.WIFEXITED(status) else None
    return _failed(ex, ErrorCode.RUNTIME_ERROR, EXITED(status=code) if code is not None else ENDED())


def _parse(data: bytes) -> dict[str, Any] | str:
    """The result envelope, normalised (``sandbox.results``), or what is wrong with it."""
    try:
        parsed = load_json(data, max_depth=MAX_DEPTH + 1)  # the envelope is one level
    except ValueError as exc:
        return refusal(exc)
    if not isinstance(parsed, dict):
        return MALFORMED()
    return parsed


def _failed(ex: Exchange, code: ErrorCode, message: str, trace: str | None = None) -> CodeOutcome:
    return CodeOutcome(error=code, message=message, traceback=trace, duration_ms=ex.elapsed_ms, output=_printed(ex))


def _printed(ex: Exchange) -> str | None:
    """What the evaluator printed: the child cuts it and says so; only raw writes are cut here."""
    if not ex.output:
        return None
    return cap_text(ex.output.decode("utf-8", "replace"), HOST_MAX_PRINTED_CHARS)


def _signal_name(sig: int) -> str:
    try:
        return signal.Signals(sig).name
    except ValueError:
        return f"signal {sig}"
