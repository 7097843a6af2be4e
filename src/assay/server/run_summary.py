"""A finished run's summary and its comparison with another run, both from the engine's own
rules: each sample's stored results become a verdict through ``core.aggregate.judge_sample``
(a sample passes when every evaluator that graded it passed; its score is the weighted mean
of the scores it got; errors and pending results apart), and the verdicts are added up by
``core.summary.RunningSummary`` (95% intervals) or paired by ``core.compare``."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from sqlalchemy.orm import Session

from assay.core.aggregate import SampleVerdict, judge_sample
from assay.core.compare import compare_runs
from assay.core.result import ErrorCode, GraderResult, Status, make_result
from assay.core.summary import GraderSummary, RunningSummary
from assay.store import runs as run_rows
from assay.store.models import EvaluationResult

_ERRORS = {e.value: e for e in ErrorCode}


def run_verdicts(session: Session, run_id: str, weights: dict[str, float],
                 names: dict[str, str] | None = None) -> Iterator[SampleVerdict]:
    """The verdict of each sample of run ``run_id``, in dataset order, streamed (results come
    sample by sample). Each result is named by its evaluator id, so two evaluators with one
    name stay apart; ``names`` (if given) is filled with id -> evaluator name."""
    sample: str | None = None
    got: list[GraderResult] = []
    for row in run_rows.iter_results(session, run_rows.results_query(run_id)):
        if row.sample_id != sample:
            if sample is not None:
                yield judge_sample(sample, got)
            sample, got = row.sample_id, []
        if names is not None:
            names.setdefault(row.evaluator_id, row.evaluator_name)
        got.append(_result(row, weights.get(row.evaluator_id, 1.0)))
    if sample is not None:
        yield judge_sample(sample, got)


def _result(row: EvaluationResult, weight: float) -> GraderResult:
    status = Status(row.status)
    return make_result(row.evaluator_id, "", "code", status, status is Status.PASSED, row.score, row.reason, {},
                       _ERRORS.get(row.error_code or "", ErrorCode.RUNTIME_ERROR) if status is Status.ERROR
                       else None, weight)


def summarise(session: Session, run_id: str, weights: dict[str, float]) -> dict[str, Any]:
    """The summary of run ``run_id``; ``weights`` maps evaluator id to its weight in the task.
    Pass rates leave errors and pending results out (``leftOut`` counts them); every rate and
    mean carries its 95% interval."""
    names: dict[str, str] = {}
    running = RunningSummary().add(run_verdicts(session, run_id, weights, names))
    s = running.summary()
    return {
        "samples": s.total, "samplesPassed": s.passed, "samplesFailed": s.failed, "samplesErrored": s.errors,
        "samplesPending": s.pending, "passRate": s.pass_rate, "meanScore": s.mean_score,
        "passRateCi": _pair(s.intervals.pass_rate), "meanScoreCi": _pair(s.intervals.mean_score),
        "leftOut": s.errors + s.pending,
        "evaluators": [_evaluator(g, names.get(g.name, g.name)) for g in s.graders],
    }


def _evaluator(g: GraderSummary, name: str) -> dict[str, Any]:
    return {"evaluatorId": g.name, "name": name, "passed": g.passed, "failed": g.failed, "error": g.errors,
            "pending": g.pending, "passRate": g.pass_rate, "meanScore": g.mean_score,
            "passRateCi": _pair(g.intervals.pass_rate), "meanScoreCi": _pair(g.intervals.mean_score),
            "leftOut": g.errors + g.pending}


def _pair(interval: tuple[float, float] | None) -> list[float] | None:
    return list(interval) if interval else None


def compare(session: Session, base: tuple[str, dict[str, float]], new: tuple[str, dict[str, float]]) -> dict[str, Any]:
    """Run ``new`` against run ``base`` (each: run id, evaluator weights), as ``assay compare
    --json`` prints it (``schemas.compare`` makes it camelCase); each evaluator's entry names
    it by ``grader`` (its name) and ``evaluator_id``."""
    names: dict[str, str] = {}
    doc = compare_runs(run_verdicts(session, base[0], base[1], names),
                       run_verdicts(session, new[0], new[1], names)).to_dict()
    for g in doc["graders"]:
        g["evaluator_id"], g["grader"] = g["grader"], names.get(g["grader"], g["grader"])
    return doc
