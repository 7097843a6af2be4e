"""Aggregation: a sample's weighted score and verdict, and a suite's per-grader summary.

Errors and pending results are counted apart and left out of score averages unless
``errors_as_zero`` asks for them to count as 0.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from assay.core.result import GraderResult, Status

PASSED, FAILED, ERROR = Status.PASSED, Status.FAILED, Status.ERROR


@dataclass(slots=True)
class SampleVerdict:
    id: str
    status: Status
    passed: bool
    score: float | None
    results: list[GraderResult]
    skipped: list[str] = field(default_factory=list)
    """Graders not run because a cheaper one had already failed (cost-ordered grading)."""

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "status": self.status.value,
            "passed": self.passed,
            "score": self.score,
            "results": [dict(r.__dict__) for r in self.results],
        }
        if self.skipped:
            out["skipped"] = self.skipped
        return out


def weighted_score(results: Iterable[GraderResult], *, errors_as_zero: bool = False) -> float | None:
    """Weighted mean of scores; None when nothing was scored or all weights are zero."""
    return _tally(results, errors_as_zero)[0]


def _tally(results: Iterable[GraderResult], errors_as_zero: bool) -> tuple[float | None, bool, bool, bool]:
    """The weighted score, and whether any result failed, erred or is pending: one pass,
    comparing statuses by identity (a set of them hashed each enum member in Python: 5% of the
    per-sample work of a four-preset run)."""
    total = weights = 0.0
    any_failed = any_error = any_pending = False
    for r in results:
        status = r.status
        if status.__class__ is not Status:  # a plain string (a result built with model_construct)
            status = Status(status)
        if status is PASSED or status is FAILED:
            any_failed = any_failed or status is FAILED
            if r.score is not None:
                total += r.score * r.weight
                weights += r.weight
        elif status is ERROR:
            any_error = True
            if errors_as_zero:
                weights += r.weight
        else:
            any_pending = True
    return (total / weights if weights > 0 else None), any_failed, any_error, any_pending


def judge_sample(sample_id: str, results: list[GraderResult], *, threshold: float | None = None,
                 errors_as_zero: bool = False) -> SampleVerdict:
    """Decide a sample's verdict.

    Without a threshold every scored grader must pass; with one, the weighted score must
    reach it. A definite failure wins over errors; errors win over pending results.
    """
    score, any_failed, any_error, any_pending = _tally(results, errors_as_zero)
    failed = any_failed if threshold is None else score is not None and score < threshold
    if failed:
        status = FAILED
    elif any_error:
        status = ERROR
    elif any_pending:
        status = Status.PENDING
    elif threshold is not None and score is None:
        status = FAILED if results else PASSED
    else:
        status = PASSED
    return SampleVerdict(sample_id, status, status is PASSED, score, results)


def judge_columns(ids: Iterable[str], columns: Sequence[Sequence[GraderResult]], *,
                  threshold: float | None = None) -> list[SampleVerdict]:
    """``judge_sample`` for each sample of a chunk graded column by column: ``columns`` holds one
    result per sample for each grader, in the graders' order."""
    return [judge_sample(sample_id, list(got), threshold=threshold) for sample_id, *got in zip(ids, *columns)]


@dataclass(slots=True)
class GraderSummary:
    name: str
    type: str
    weight: float | None
    """None for a grader that was skipped for every sample (never built, so unknown here)."""
    total: int = 0
    passed: int = 0
    failed: int = 0
    errors: int = 0
    pending: int = 0
    skipped: int = 0
    score_sum: float = 0.0
    error_codes: dict[str, int] = field(default_factory=dict)

    @property
    def pass_rate(self) -> float | None:
        scored = self.passed + self.failed
        return self.passed / scored if scored else None

    @property
    def mean_score(self) -> float | None:
        scored = self.passed + self.failed
        return self.score_sum / scored if scored else None

    def to_dict(self) -> dict:
        return {
            "name": self.name, "type": self.type, "weight": self.weight, "total": self.total,
            "passed": self.passed, "failed": self.failed, "errors": self.errors,
            "pending": self.pending, "skipped": self.skipped, "pass_rate": self.pass_rate,
            "mean_score": self.mean_score, "error_codes": self.error_codes,
        }


@dataclass(slots=True)
class SuiteSummary:
    total: int = 0
    passed: int = 0
    failed: int = 0
    errors: int = 0
    pending: int = 0
    mean_score: float | None = None
    graders: list[GraderSummary] = field(default_factory=list)

    @property
    def all_passed(self) -> bool:
        return self.passed == self.total

    def to_dict(self) -> dict:
        return {
            "total": self.total, "passed": self.passed, "failed": self.failed,
            "errors": self.errors, "pending": self.pending, "mean_score": self.mean_score,
            "graders": [g.to_dict() for g in self.graders],
        }


def summarize(verdicts: Sequence[SampleVerdict]) -> SuiteSummary:
    """Per-suite counts and a per-grader table, in the order graders first appear."""
    suite = SuiteSummary(total=len(verdicts))
    by_name: dict[str, GraderSummary] = {}
    skipped: dict[str, int] = {}
    score_sum = 0.0
    scored = 0
    for v in verdicts:
        if v.status is Status.PASSED:
            suite.passed += 1
        elif v.status is Status.FAILED:
            suite.failed += 1
        elif v.status is Status.ERROR:
            suite.errors += 1
        else:
            suite.pending += 1
        if v.score is not None:
            score_sum += v.score
            scored += 1
        for r in v.results:
            g = by_name.get(r.name)
            if g is None:
                g = by_name[r.name] = GraderSummary(r.name, r.type, r.weight)
            g.total += 1
            if r.status is Status.PASSED:
                g.passed += 1
                g.score_sum += r.score or 0.0
            elif r.status is Status.FAILED:
                g.failed += 1
                g.score_sum += r.score or 0.0
            elif r.status is Status.ERROR:
                g.errors += 1
                code = r.error.value if r.error else "unknown"
                g.error_codes[code] = g.error_codes.get(code, 0) + 1
            else:
                g.pending += 1
        for name in v.skipped:
            skipped[name] = skipped.get(name, 0) + 1
    # After the loop: a grader may be skipped before (or without) ever being graded.
    for name, count in skipped.items():
        g = by_name.get(name)
        if g is None:
            g = by_name[name] = GraderSummary(name, "-", None)
        g.skipped = count
    suite.mean_score = score_sum / scored if scored else None
    suite.graders = list(by_name.values())
    return suite
