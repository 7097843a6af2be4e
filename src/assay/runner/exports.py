"""Results in the shapes waza and Vally read.

waza: ``{name, type, score, passed, message, details}`` per grader; a sample becomes a
trial-like ``{id, status, passed, score, grader_results: {name: ...}}``.
Vally: ``{name, passed, score, evidence, kind, metadata}`` per grader; a sample becomes
``{id, status, passed, score, graderResults: [...]}``; the Vally functions live in
``export_vally`` (which also exports the runs, so they can be graded again) and are
re-exported here.

Neither tool has ``error`` or ``pending`` results, so those export with ``passed: false``,
``score: 0`` and assay's ``status`` and ``error`` code kept in ``details`` / ``metadata``:
a consumer that reads only ``passed`` sees them as not passed, and nothing is lost.
"""

from __future__ import annotations

from typing import Any

from assay.core.aggregate import SampleVerdict
from assay.core.result import GraderResult, Status
from assay.runner.export_vally import export_vally, result_to_vally, verdict_to_vally

__all__ = ["export_vally", "result_to_vally", "result_to_waza", "verdict_to_vally", "verdict_to_waza"]


def _score(result: GraderResult) -> float:
    return result.score if result.score is not None else 0.0


def _default_text(result: GraderResult) -> str:
    if result.status is Status.PENDING:
        return f"{result.name}: pending review"
    if result.status is Status.ERROR:
        return f"{result.name}: error ({result.error.value if result.error else 'unknown'})"
    return f"{result.name} {'passed' if result.passed else 'failed'}"


def result_to_waza(result: GraderResult) -> dict[str, Any]:
    """One result as waza's GraderResult."""
    details = dict(result.details)
    details["status"] = result.status.value
    if result.error is not None:
        details["error"] = result.error.value
    details["weight"] = result.weight
    return {
        "name": result.name, "type": result.type, "score": _score(result), "passed": result.passed,
        "message": result.reason or _default_text(result), "details": details,
        "duration_ms": int(round(result.latency_ms)),
    }


def verdict_to_waza(verdict: SampleVerdict) -> dict[str, Any]:
    """A graded sample as a waza trial: grader results keyed by name."""
    return {
        "id": verdict.id, "status": verdict.status.value, "passed": verdict.passed,
        "score": verdict.score if verdict.score is not None else 0.0,
        "grader_results": {r.name: result_to_waza(r) for r in verdict.results},
    }
