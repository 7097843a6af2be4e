"""GraderResult: the one result model every grader produces.

Graders build results through ``Grader.scored_result``, ``Grader.error_result`` and
``Grader.pending_result`` (see ``core.grader``), never by hand, so that name, type, kind and
weight always agree with the grader's spec. A batch grader that gives many samples one result
copies a builder's result with ``copier`` rather than building each.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from assay.core._unvalidated import build, shared_keys
from assay.core.messages import code_and_args

Kind = Literal["code", "llm", "human"]
"""Who decides: ``code`` (deterministic code, a program), ``llm`` (a model judge), ``human``."""


class Status(StrEnum):
    """What became of one grader on one sample."""

    PASSED = "passed"
    """Graded, and the sample meets the grader's bar."""
    FAILED = "failed"
    """Graded, and the sample falls short; ``reason`` says why."""
    ERROR = "error"
    """Not graded: ``error`` holds the code. Never counted as a failure."""
    PENDING = "pending"
    """Not graded yet: awaiting a decision (a human review)."""


class ErrorCode(StrEnum):
    """Why a grader could not grade a sample (``status`` ``error``).

    An error is a statement about the grading, not about the sample: when the grader could
    look at the sample and found it wanting, the result is ``failed``, whatever was wrong with
    the output (it does not match, it is not JSON where JSON was required, it is too far from
    the expected text). Config problems found when a spec arrives are ``SpecError``s, not
    results.
    """

    TIMEOUT = "timeout"
    """Grading ran past its time bound: sandboxed code, a program or a script past its
    ``timeout``; a backtracking pattern search past its ``timeout_ms``."""
    MEMORY = "memory"
    """Sandboxed code went past its memory limit and was stopped."""
    SANDBOX_VIOLATION = "sandbox_violation"
    """Sandboxed code attempted something the sandbox forbids (network, files, a forbidden
    system call) and was stopped."""
    INVALID_CONFIG = "invalid_config"
    """The config cannot be used for this sample, which only grading time can tell: a script
    file that is not there, a ``sub_path`` missing or escaping this sample's workspace, a
    language the code runner does not run."""
    INVALID_OUTPUT = "invalid_output"
    """A value the grader must read has an unusable shape: the sample's output, expected value
    or transcript cannot be read (nested deeper than ``MAX_DEPTH``, not a JSON value, longer
    than a configured limit), or what user code or a script returned parsed but is not the
    agreed object (``evaluate()`` without ``passed``, a ``score`` outside [0, 1])."""
    PARSE_FAILURE = "parse_failure"
    """A reply the grader asked for cannot be parsed at all: a script printed something that
    is not JSON (and, for judges, a model reply with no readable verdict). Parsed but wrongly
    shaped is ``invalid_output``; the sample's own output failing to parse where parsing it is
    the check (``json_schema``) is a ``failed`` result."""
    RUNTIME_ERROR = "runtime_error"
    """Code crashed: user code raised, a script exited with a non-zero code, or the grader
    itself raised (the runner turns the exception into this result)."""
    UNAVAILABLE = "unavailable"
    """Something grading needs is missing here: no sandbox or process runner configured, a
    runtime (Node.js) not installed, a program that cannot be started, no workspace."""


class GraderResult(BaseModel):
    """The outcome of one grader on one sample.

    ``status`` says what happened; ``passed`` and ``score`` are the grade (``score`` is None
    when there is none: ``error`` and ``pending``). An error is never a failure: aggregates
    count errors and pending results apart and leave them out of score averages.
    """

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="The grader's name in its spec (defaults to its type).")
    type: str = Field(description="The grader's registry key, e.g. regex.")
    kind: Kind = Field(default="code", description="Who decides: code, llm or human.")
    status: Status = Field(description="passed or failed (graded), error (could not grade: see `error`), "
                                       "pending (awaiting a human).")
    passed: bool = Field(description="True only when status is passed.")
    score: float | None = Field(default=None, ge=0.0, le=1.0,
                                description="The grade in [0, 1] (1 or 0 unless the grader is finer); "
                                            "null when status is error or pending.")
    reason: str | None = Field(default=None, description="Why, for a person: what failed, what went wrong, what "
                                                         "to look at (cut after 4,096 characters); null when "
                                                         "nothing needs saying. Exported as waza `message`, "
                                                         "Vally `evidence`.")
    reason_code: str | None = Field(default=None, description="The code of the message `reason` says, when the "
                                                              "product wrote it (core.messages: e.g. "
                                                              "regex.no_match); null for what user code or a "
                                                              "judge wrote. Pages translate by it.")
    reason_args: dict[str, Any] | None = Field(default=None, description="The values that fill the message of "
                                                                         "`reason_code`; null without a code.")
    details: dict[str, Any] = Field(default_factory=dict,
                                    description="Machine-readable particulars: per-check rows, matched spans, "
                                                "the limits in force, what a program printed.")
    error: ErrorCode | None = Field(default=None, description="Why the grader could not grade, when status is "
                                                              "error; null otherwise.")
    latency_ms: float = Field(default=0.0, description="Time spent grading this sample, in ms (a batch's time "
                                                       "shared equally among its samples); set by the runner.")
    weight: float = Field(default=1.0, ge=0.0, description="The grader's weight in the sample's weighted score, "
                                                           "from its spec.")

    @property
    def scored(self) -> bool:
        """True when the result counts towards score averages (passed or failed)."""
        return self.status in (Status.PASSED, Status.FAILED)


# Every result has every field set, so one shared set serves them all: pydantic only ever adds
# a field name to it (on assignment), and every name is already there.
_ALL_FIELDS_SET = set(GraderResult.model_fields)


def make_result(name: str, type_: str, kind: str, status: Status, passed: bool, score: float | None,
                reason: str | None, details: dict[str, Any], error: ErrorCode | None,
                weight: float) -> GraderResult:
    """Fast, unvalidated constructor for the builders in ``Grader`` (field order as declared).
    A ``reason`` a phrase said (``core.messages.Said``) is stored as plain text, its code and
    arguments beside it."""
    code, args = code_and_args(reason)
    if code is not None:
        reason = str(reason)
    return build(GraderResult, {"name": name, "type": type_, "kind": kind, "status": status, "passed": passed,
                                "score": score, "reason": reason, "reason_code": code, "reason_args": args,
                                "details": details, "error": error, "latency_ms": 0.0, "weight": weight},
                 _ALL_FIELDS_SET)


def copier(result: GraderResult) -> Callable[..., GraderResult]:
    """A function returning fresh copies of ``result``, each with its own shallow copy of
    ``details`` and, when one is given, its own ``reason``: for a batch grader that gives many
    samples one result, at about half the cost of building each (a copy of a compact dict
    instead of a call chain and an 11-key dict). The reason is taken as it is (cap it first)."""
    fields = shared_keys(GraderResult, result.__dict__)
    details = fields["details"]

    def copy(reason: str | None = None) -> GraderResult:
        own = fields.copy()
        own["details"] = details.copy()
        if reason is not None:
            code, args = code_and_args(reason)
            own["reason"], own["reason_code"], own["reason_args"] = \
                (reason, None, None) if code is None else (str(reason), code, args)
        return build(GraderResult, own, _ALL_FIELDS_SET)

    return copy
