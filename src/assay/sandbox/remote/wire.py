"""The sandbox service's HTTP shapes, shared by the server (``assay.sandbox_service``) and the
client (``RemoteCodeRunner``). JSON field names are camelCase, as in the product spec.

Endpoints (every one but ``/health`` needs ``Authorization: Bearer <SANDBOX_SECRET>``):

- ``POST /execute`` (the product spec): ``{language, code, input: {input, output, expected,
  metadata}, timeout}`` -> ``{success: true, result: {passed, score, reason, details}}`` or
  ``{success: false, error}``. ``result`` is validated as the ``code`` grader validates it.
- ``POST /execute/batch`` (assay's own): ``{language, code, inputs: [...], timeout}`` ->
  ``{success: true, results: [...]}``, one ``/execute`` answer per input, in order.
- ``POST /call`` (assay's own): any ``CodeCall`` (``{language, code, function, args, timeout,
  memoryMb}``) -> ``{success: true, value}`` or ``{success: false, error}``; waza assertions use it.
- ``POST /check`` (assay's own): ``{language, code, function}`` -> ``{problem}`` (null when the
  code compiles and defines ``function``).
- ``GET /health``: the isolation layers in force and the pool's occupancy.

assay adds to every answer fields that spec clients ignore: ``errorCode`` (a ``GraderResult``
error code), ``durationMs``, ``limits``, ``output`` (what the code printed) and ``traceback``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel

from assay.core.interfaces import CodeOutcome
from assay.core.messages import Phrase
from assay.core.result import ErrorCode
from assay.sandbox.results import as_phrased, phrase_of

OUT_OF_PROTOCOL = Phrase("sandbox.remote.out_of_protocol", "the sandbox service answered out of protocol")
DEFAULT_TIMEOUT_MS = 5000
"""The spec's default ``timeout`` (ms), as the ``code`` grader's."""
SPEC_MEMORY_MB = 128
"""The memory limit the spec fixes for ``/execute``; ``/call`` may ask for another."""

ExecLanguage = Literal["python", "nodejs"]


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", alias_generator=to_camel, populate_by_name=True)


class EvaluatorInput(_Body):
    """The spec's ``EvaluatorInput``: what ``evaluate(input, output, expected, metadata)`` receives."""

    input: Any = None
    output: Any = None
    expected: Any = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class CodeBody(_Body):
    """What every request that runs or checks code carries."""

    language: ExecLanguage
    code: str


class ExecuteRequest(CodeBody):
    input: EvaluatorInput
    timeout: int = Field(default=DEFAULT_TIMEOUT_MS, ge=1, strict=True, description="ms")


class BatchRequest(CodeBody):
    inputs: list[EvaluatorInput]
    timeout: int = Field(default=DEFAULT_TIMEOUT_MS, ge=1, strict=True, description="ms, per input")
    spread: int = Field(default=0, ge=0, le=1024, strict=True,
                        description="at most this many sandbox workers run the batch at once (0: every worker)")


class CallRequest(CodeBody):
    function: str = Field(default="evaluate", pattern=r"^[A-Za-z_$][A-Za-z0-9_$]{0,63}$")
    args: list[Any] = Field(default_factory=list)
    timeout: int = Field(default=DEFAULT_TIMEOUT_MS, ge=1, strict=True, description="ms")
    memory_mb: int = Field(default=SPEC_MEMORY_MB, ge=16, le=1024, strict=True)


class CheckRequest(CodeBody):
    function: str = Field(default="evaluate", pattern=r"^[A-Za-z_$][A-Za-z0-9_$]{0,63}$")


def extras(outcome: CodeOutcome) -> dict[str, Any]:
    """assay's fields of an answer: what the sandbox reported besides the value or the error."""
    fields: dict[str, Any] = {"durationMs": round(outcome.duration_ms, 3), "limits": outcome.limits}
    if outcome.output:
        fields["output"] = outcome.output
    if outcome.traceback:
        fields["traceback"] = outcome.traceback
    return fields


def failure(outcome: CodeOutcome) -> dict[str, Any]:
    """``{success: false, error, errorCode, ...}`` for an outcome that is an error."""
    code = outcome.error or ErrorCode.RUNTIME_ERROR
    answer = {"success": False, "error": outcome.message or "evaluation failed", "errorCode": str(code),
              **extras(outcome)}
    phrase = phrase_of(outcome.message or "")
    if phrase is not None:  # the message's code (core.messages), which the client checks and keeps
        answer["errorPhrase"] = phrase
    return answer


def outcome_from(answer: dict[str, Any], value_key: str) -> CodeOutcome:
    """A ``CodeOutcome`` from one answer of ``/execute`` (``value_key="result"``) or ``/call``
    (``"value"``); a shape that is not an answer becomes ``unavailable``."""
    limits = answer.get("limits")
    if not isinstance(limits, dict):
        limits = {}
    output = answer.get("output") if isinstance(answer.get("output"), str) else None
    duration = answer.get("durationMs")
    common = CodeOutcome(limits=limits, output=output,
                         duration_ms=float(duration) if isinstance(duration, (int, float)) else 0.0)
    if answer.get("success") is True and value_key in answer:
        return replace(common, value=answer[value_key])
    if answer.get("success") is False and isinstance(answer.get("error"), str):
        try:
            code = ErrorCode(answer.get("errorCode") or ErrorCode.RUNTIME_ERROR)
        except ValueError:
            code = ErrorCode.RUNTIME_ERROR
        traceback = answer.get("traceback") if isinstance(answer.get("traceback"), str) else None
        return replace(common, error=code, message=as_phrased(answer.get("errorPhrase"), answer["error"]),
                       traceback=traceback)
    return replace(common, error=ErrorCode.UNAVAILABLE, message=OUT_OF_PROTOCOL())
