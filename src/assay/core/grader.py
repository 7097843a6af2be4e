"""The grader contract: a typed config model plus ``grade``."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar, Literal, Self

from pydantic import BaseModel, ConfigDict, PrivateAttr, ValidationError, ValidationInfo, model_validator

from assay.core.context import SpecContext, spec_context
from assay.core.errors import SpecError
from assay.core.interfaces import Resources
from assay.core.result import ErrorCode, GraderResult, Kind, Status, make_result
from assay.core.sample import Sample
from assay.core.untrusted import MAX_REASON, cap_text


class GraderConfig(BaseModel):
    """Base of every grader's config: unknown keys are rejected.

    ``base_dir`` is not a field: it comes from the validation context (``SpecContext``), so a
    relative path in a config means the same in every suite format, and users cannot set it.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    _base_dir: str | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _remember_base_dir(self, info: ValidationInfo) -> Self:
        base = spec_context(info.context).base_dir
        self._base_dir = None if base is None else str(base)
        return self

    @property
    def base_dir(self) -> str | None:
        """The folder relative paths in this config resolve against (the suite file's), or
        None for the current directory."""
        return self._base_dir


class Taxonomy(BaseModel):
    """Vally's grader taxonomy, used for cost-ordered grading and the UI."""

    model_config = ConfigDict(frozen=True)

    determinism: Literal["static", "dynamic", "stochastic", "complex-static", "slm", "llm"] = "static"
    cost: Literal["free", "low", "medium", "high"] = "free"
    reference: Literal["reference-free", "reference-based"] = "reference-based"
    temporal_scope: Literal["output-level", "trajectory-level", "point-in-time", "cross-trajectory"] = "output-level"
    portability: Literal["t1-universal", "t2-domain", "t3a-scenario", "t3b-system"] | None = None


class Grader(ABC):
    """A grader type. Subclasses set the class attributes and implement ``grade``.

    ``grade`` may raise; the runner turns an exception into a ``runtime_error`` result.
    ``grade_batch`` grades many samples under one config; override it where a vectorised
    path exists.
    """

    type: ClassVar[str]
    description: ClassVar[str]
    Config: ClassVar[type[GraderConfig]]
    kind: ClassVar[Kind] = "code"
    taxonomy: ClassVar[Taxonomy] = Taxonomy()
    io_bound: ClassVar[bool] = False
    """True when grading waits on I/O (sandbox, program, LLM): the runner grades concurrently."""

    def __init__(self, config: GraderConfig, *, name: str | None = None, weight: float = 1.0,
                 resources: Resources | None = None) -> None:
        self.config = config
        self.name = name or self.type
        self.weight = weight
        self.resources = resources or Resources()

    @classmethod
    def parse_config(cls, raw: Any, *, path: str = "config", context: SpecContext | None = None) -> GraderConfig:
        """Validate a raw config under ``context`` (see core.context); raises SpecError naming
        the bad field."""
        if raw is None:
            raw = {}
        try:
            return cls.Config.model_validate(raw, context=context or SpecContext())
        except ValidationError as exc:
            raise SpecError.from_validation(exc, path=path) from None
        except (ValueError, TypeError) as exc:
            raise SpecError(str(exc), path=path) from None

    @abstractmethod
    def grade(self, sample: Sample) -> GraderResult: ...

    def grade_batch(self, samples: Sequence[Sample]) -> list[GraderResult]:
        return [self.grade(s) for s in samples]

    # Result builders: every grader reports through these, so name/type/kind/weight agree.

    def verdict(self, passed: bool, score: float | None = None, reason: str | None = None,
                details: dict[str, Any] | None = None) -> GraderResult:
        """A passed or failed result; ``score`` defaults to 1 or 0 and must be in [0, 1]."""
        if score is None:
            score = 1.0 if passed else 0.0
        if reason is not None and len(reason) > MAX_REASON:
            reason, details = _capped(reason, details)
        return make_result(self.name, self.type, self.kind, _PASSED if passed else _FAILED, passed,
                           float(score), reason, {} if details is None else details, None, self.weight)

    def error(self, code: ErrorCode, reason: str, details: dict[str, Any] | None = None) -> GraderResult:
        """The grader could not grade: never counted as a failure."""
        if len(reason) > MAX_REASON:
            reason, details = _capped(reason, details)
        return make_result(self.name, self.type, self.kind, Status.ERROR, False, None, reason,
                           {} if details is None else details, ErrorCode(code), self.weight)

    def pending(self, reason: str, details: dict[str, Any] | None = None) -> GraderResult:
        """Awaiting a decision (human review)."""
        if len(reason) > MAX_REASON:
            reason, details = _capped(reason, details)
        return make_result(self.name, self.type, self.kind, Status.PENDING, False, None, reason,
                           {} if details is None else details, None, self.weight)


_PASSED, _FAILED = Status.PASSED, Status.FAILED


def _capped(reason: str, details: dict[str, Any] | None) -> tuple[str, dict[str, Any]]:
    """A reason cut to ``MAX_REASON`` characters; its full length goes into ``details``."""
    return cap_text(reason, MAX_REASON), {**(details or {}), "reason_length": len(reason)}


class BatchGrader(Grader):
    """A grader whose natural unit is a batch (one compiled pattern or schema, a vectorised
    library call): ``grade`` grades a batch of one, and the runner times the batch as a whole."""

    def grade(self, sample: Sample) -> GraderResult:
        return self.grade_batch([sample])[0]

    @abstractmethod
    def grade_batch(self, samples: Sequence[Sample]) -> list[GraderResult]: ...
