"""Aggregation: a sample's weighted score and verdict; a suite's per-grader summary lives in
``core.summary`` (re-exported here).

Errors and pending results are counted apart and left out of score averages unless
``errors_as_zero`` asks for them to count as 0.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from assay.core.result import GraderResult, Status
from assay.core.summary import GraderSummary, RunningSummary, SuiteSummary, summarize

__all__ = ["GraderSummary", "RunningSummary", "SampleVerdict", "SuiteSummary", "judge_columns", "judge_sample",
           "summarize", "weighted_score"]

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
    cluster: str | None = None
    """The task this sample is one attempt of (a repeat, a waza trial, a Vally trajectory),
    when it has several: attempts of one task are correlated, so intervals cluster by it and
    comparisons pair by it. None: the sample is its own cluster."""

    def to_dict(self, codes: bool = False) -> dict[str, Any]:
        """The verdict as a results line writes it. A result's ``reason_code`` and
        ``reason_args`` stay out unless ``codes`` asks for them: they serve the service's pages
        (the Ray workers' lines carry them to it), and a results file reads as it always has."""
        out: dict[str, Any] = {
            "id": self.id,
            "status": self.status.value,
            "passed": self.passed,
            "score": self.score,
            "results": [dict(r.__dict__) if codes else _line_fields(r) for r in self.results],
        }
        if self.skipped:
            out["skipped"] = self.skipped
        if self.cluster is not None:
            out["cluster"] = self.cluster
        return out


def _line_fields(result: GraderResult) -> dict[str, Any]:
    fields = dict(result.__dict__)
    del fields["reason_code"], fields["reason_args"]
    return fields


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
