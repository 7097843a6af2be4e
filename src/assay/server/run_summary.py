"""A finished run's summary: per evaluator counts and mean score, and per sample verdicts
(a sample passes when every evaluator that graded it passed; its score is the weighted mean
of the scores it got). Errors and pending results are counted apart, never as failures.
Everything is counted by the database (``GROUP BY``): a run of a million samples is summed
without its results passing through this process."""

from __future__ import annotations

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

    verdicts = run_rows.sample_verdicts(session, run_id, weights)
    counts = {status: verdicts.get(status, (0, 0.0, 0))[0] for status in ("passed", "failed", "error", "pending")}
    samples = sum(counts.values())
    scored = sum(k for _, _, k in verdicts.values())
    total_score = sum(total for _, total, _ in verdicts.values())
    return {
        "samples": samples,
        "samplesPassed": counts["passed"],
        "samplesFailed": counts["failed"],
        "samplesErrored": counts["error"],
        "samplesPending": counts["pending"],
        "passRate": counts["passed"] / samples if samples else None,
        "meanScore": total_score / scored if scored else None,
        "evaluators": list(per_evaluator.values()),
    }
