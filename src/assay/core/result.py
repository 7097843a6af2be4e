"""GraderResult: the one result model every grader produces."""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Kind = Literal["code", "llm", "human"]


class Status(StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"
    PENDING = "pending"


class ErrorCode(StrEnum):
    TIMEOUT = "timeout"
    MEMORY = "memory"
    SANDBOX_VIOLATION = "sandbox_violation"
    INVALID_CONFIG = "invalid_config"
    INVALID_OUTPUT = "invalid_output"
    PARSE_FAILURE = "parse_failure"
    RUNTIME_ERROR = "runtime_error"
    UNAVAILABLE = "unavailable"


class GraderResult(BaseModel):
    """The outcome of one grader on one sample.

    ``score`` is in [0, 1], or ``None`` when ``status`` is ``error`` or ``pending``.
    An error is never a failure: aggregates count errors and pending results apart.
    """

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="The grader's name in its spec.")
    type: str = Field(description="The grader's registry key.")
    kind: Kind = Field(default="code", description="code, llm or human.")
    status: Status
    passed: bool
    score: float | None = Field(default=None, ge=0.0, le=1.0)
    reason: str | None = Field(default=None, description="Human-readable explanation.")
    details: dict[str, Any] = Field(default_factory=dict)
    error: ErrorCode | None = None
    latency_ms: float = 0.0
    weight: float = Field(default=1.0, ge=0.0)

    @property
    def scored(self) -> bool:
        """True when the result counts towards score averages."""
        return self.status in (Status.PASSED, Status.FAILED)


# Every result has every field set, so one shared set serves them all: pydantic only ever adds
# a field name to it (on assignment), and every name is already there.
_ALL_FIELDS_SET = set(GraderResult.model_fields)
_new = GraderResult.__new__
_set = object.__setattr__
# BaseModel's own slots, set through their descriptors: the same effect as model_construct
# without its per-field work.
_set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
_set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
_set_private = BaseModel.__dict__["__pydantic_private__"].__set__


def _unvalidated(fields: dict[str, Any]) -> GraderResult:
    obj = _new(GraderResult)
    _set(obj, "__dict__", fields)
    _set_fields_set(obj, _ALL_FIELDS_SET)
    _set_extra(obj, None)
    _set_private(obj, None)
    return obj


def make_result(name: str, type_: str, kind: str, status: Status, passed: bool, score: float | None,
                reason: str | None, details: dict[str, Any], error: ErrorCode | None,
                weight: float) -> GraderResult:
    """Fast, unvalidated constructor for the builders in ``Grader`` (field order as declared)."""
    return _unvalidated({"name": name, "type": type_, "kind": kind, "status": status, "passed": passed,
                         "score": score, "reason": reason, "details": details, "error": error,
                         "latency_ms": 0.0, "weight": weight})
