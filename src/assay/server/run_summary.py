"""A finished run's summary: per evaluator counts and mean score, and per sample verdicts
(a sample passes when every evaluator that graded it passed; its score is the weighted mean
of the scores it got). Errors and pending results are counted apart, never as failures."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from sqlalchemy.orm import Session

from assay.store import runs as run_rows


def summarise(session: Session, run_id: str, weights: dict[str, float]) -> dict[str, Any]:
    """The summary of run ``run_id``; ``weights`` maps evaluator id to its weight in the task."""
    per_evaluator: dict[str, dict[str, Any]] = {}
    for evaluator_id, name, status, count, mean in run_rows.status_counts(session, run_id):
        row = per_evaluator.setdefault(evaluator_id, {"evaluatorId": evaluator_id, "name": name, "passed": 0,
                                                      "failed": 0, "error": 0, "pending": 0, "meanScore": None})
        row[status] = row.get(status, 0) + count
        if status in ("passed", "failed") and mean is not None:
            scored = row.pop("_scored", 0)
            total = row.pop("_total", 0.0) + mean * count
            row["_scored"], row["_total"] = scored + count, total
    for row in per_evaluator.values():
        scored = row.pop("_scored", 0)
        total = row.pop("_total", 0.0)
        row["meanScore"] = total / scored if scored else None

    samples: dict[str, list[tuple[str, float | None, float]]] = defaultdict(list)
    query = run_rows.results_query(run_id)
    for result in run_rows.iter_results(session, query):
        samples[result.sample_id].append((result.status, result.score, weights.get(result.evaluator_id, 1.0)))
    verdicts = {"passed": 0, "failed": 0, "error": 0, "pending": 0}
    scores = []
    for rows in samples.values():
        statuses = {status for status, _, _ in rows}
        verdict = ("failed" if "failed" in statuses else "error" if "error" in statuses
                   else "pending" if "pending" in statuses else "passed")
        verdicts[verdict] += 1
        weight = sum(w for status, score, w in rows if status in ("passed", "failed") and score is not None)
        if weight > 0:
            scores.append(sum(score * w for status, score, w in rows
                              if status in ("passed", "failed") and score is not None) / weight)
    return {
        "samples": len(samples),
        "samplesPassed": verdicts["passed"],
        "samplesFailed": verdicts["failed"],
        "samplesErrored": verdicts["error"],
        "samplesPending": verdicts["pending"],
        "passRate": verdicts["passed"] / len(samples) if samples else None,
        "meanScore": sum(scores) / len(scores) if scores else None,
        "evaluators": list(per_evaluator.values()),
    }
