"""A run's snapshot of its evaluators, and the result row each verdict becomes.

A run grades what its task's evaluators were when it started: their configs as stored (validated,
every default filled in) and their weights in the task, kept in the run's ``evaluators`` JSON
column. ``RunEvaluator`` is that document's one reading and writing; the slices (local and
Ray), the worker, the run pages and the comparison read it, the task route writes it.

``result_row`` is the one mapping from a verdict to its ``evaluation_results`` row, for a
result graded here (``GraderResult``) and one read back from a Ray worker's results line
(that result's fields as JSON) alike.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from assay.core.result import GraderResult

if TYPE_CHECKING:  # models reads snapshots (``Run.snapshot``)
    from assay.store.models import Evaluator


@dataclass(frozen=True, slots=True)
class RunEvaluator:
    """One evaluator as a run graded it. JSON (``to_json``): ``{evaluatorId, name, type,
    config, weight, version}``, the row's camelCase as the pages read it (``version`` is absent
    in runs started before evaluators had versions)."""

    evaluator_id: str
    name: str
    type: str
    """The evaluator type (``preset``, ``code``, ``llm``, ``composite``), not the grader's."""
    config: dict[str, Any]
    """The stored config in the type's shape (``store.translate``), as validated."""
    weight: float
    """Its weight in the task (the sample's weighted score)."""
    version: int | None = None
    """The number of the evaluator's version this is (``EvaluatorVersion``)."""

    @classmethod
    def of(cls, evaluator: Evaluator, weight: float) -> RunEvaluator:
        """The snapshot of a stored evaluator attached with ``weight``."""
        return cls(evaluator.id, evaluator.name, evaluator.type, evaluator.config, float(weight), evaluator.version)

    @classmethod
    def from_json(cls, doc: Mapping[str, Any]) -> RunEvaluator:
        version = doc.get("version")
        return cls(str(doc["evaluatorId"]), str(doc["name"]), str(doc["type"]), dict(doc.get("config") or {}),
                   float(doc["weight"]), int(version) if version is not None else None)

    def to_json(self) -> dict[str, Any]:
        doc = {"evaluatorId": self.evaluator_id, "name": self.name, "type": self.type, "config": self.config,
               "weight": self.weight}
        if self.version is not None:
            doc["version"] = self.version
        return doc


def read_snapshot(docs: Iterable[Mapping[str, Any]] | None) -> list[RunEvaluator]:
    """A run's ``evaluators`` column as typed entries (an empty list for none)."""
    return [RunEvaluator.from_json(doc) for doc in docs or ()]


def weights(snapshot: Sequence[RunEvaluator]) -> dict[str, float]:
    """Evaluator id to weight: what the run's summaries and comparisons weigh results by."""
    return {e.evaluator_id: e.weight for e in snapshot}


def result_row(run_id: str, evaluator: RunEvaluator, sample_id: str, position: int,
               result: GraderResult | Mapping[str, Any]) -> dict[str, Any]:
    """The ``evaluation_results`` row of one verdict on sample ``sample_id`` at ``position``:
    a ``GraderResult``, or a result of a results line (its fields as JSON: the Ray workers')."""
    fields: Mapping[str, Any] = vars(result) if isinstance(result, GraderResult) else result
    error = fields.get("error")
    return {"run_id": run_id, "sample_id": sample_id, "sample_index": position,
            "evaluator_id": evaluator.evaluator_id, "evaluator_name": evaluator.name,
            "status": str(fields["status"]), "passed": fields["passed"], "score": fields["score"],
            "reason": fields.get("reason"), "reason_code": fields.get("reason_code"),
            "reason_args": fields.get("reason_args"), "details": fields.get("details") or {},
            "error_code": None if error is None else str(error), "latency_ms": fields.get("latency_ms") or 0.0}
