"""A graded suite as the results file waza writes today (Go edition, ``waza run -o``:
``EvaluationOutcome`` in ``internal/models/outcome.go``), so waza's tools read assay's verdicts
and ``assay run eval.yaml --results <export>`` grades the same runs again.

Samples of one task (``metadata.task``, as the waza dialect sets it; else the sample's id) are
the ``runs`` of one ``tasks[]`` entry, numbered by their ``#n`` suffix. Each run keeps what a
grader reads: ``final_output``, the transcript as waza's ``TranscriptEvent`` JSON, the
``session_digest`` (recorded, else built from the transcript), ``duration_ms``, and, beyond
waza's fields (its readers ignore them), ``workspace`` and ``outcome``. assay's results are
the run's ``validations`` under the peer's grader names (``waza_text`` is ``text``); an
``error`` or ``pending`` result exports as not passed with score 0, its assay status and error
code kept in ``details``. A run with an error result is ``error``, as waza marks runs it could
not grade.
"""

from __future__ import annotations

import json
import statistics
import time
from collections.abc import Sequence
from typing import Any

from assay.core.aggregate import SampleVerdict
from assay.core.result import GraderResult, Status
from assay.core.sample import Sample
from assay.graders import go_transcript, session_calls

PEER_TYPES = {"waza_text": "text", "waza_file": "file", "waza_diff": "diff", "waza_behavior": "behavior",
              "waza_action_sequence": "action_sequence", "waza_skill_invocation": "skill_invocation",
              "waza_tool_constraint": "tool_constraint", "waza_program": "program", "waza_json_schema": "json_schema"}
"""assay grader types that implement a waza kind, by the kind's name in waza."""
CHECKPOINT = "waza_checkpoint"
"""Checkpoint results go to the run's ``checkpoints``, not its ``validations``."""


def export_waza(name: str, samples: Sequence[Sample], verdicts: Sequence[SampleVerdict], *,
                skill: str | None = None) -> dict[str, Any]:
    """The ``EvaluationOutcome`` for ``verdicts`` of ``samples`` (matched by id)."""
    by_id = {s.id: s for s in samples}
    tasks: dict[str, dict[str, Any]] = {}
    for v in verdicts:
        sample = by_id.get(v.id)
        task_id = str(sample.metadata.get("task", v.id)) if sample is not None else v.id
        task = tasks.setdefault(task_id, {"test_id": task_id, "display_name": _display(sample, task_id),
                                          "status": "passed", "runs": []})
        run = _run(v, sample, len(task["runs"]) + 1)
        task["runs"].append(run)
        if run["status"] != "passed":
            task["status"] = "failed"
    scores = [v.score or 0.0 for v in verdicts]
    runs = max((len(t["runs"]) for t in tasks.values()), default=1)
    outcomes = list(tasks.values())
    succeeded = sum(t["status"] == "passed" for t in outcomes)
    errors = sum(any(r["status"] == "error" for r in t["runs"]) for t in outcomes)
    return {
        "eval_id": f"assay-{int(time.time())}", "skill": skill or "", "eval_name": name,
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "config": {"runs_per_test": runs, "model_id": "", "engine_type": "assay", "timeout_sec": 0},
        "summary": {
            "total_tests": len(outcomes), "succeeded": succeeded, "failed": len(outcomes) - succeeded,
            "errors": errors, "skipped": 0, "success_rate": succeeded / len(outcomes) if outcomes else 0.0,
            "aggregate_score": statistics.fmean(scores) if scores else 0.0,
            "weighted_score": statistics.fmean(scores) if scores else 0.0,
            "min_score": min(scores, default=0.0), "max_score": max(scores, default=0.0),
            "std_dev": statistics.pstdev(scores) if scores else 0.0, "duration_ms": 0,
        },
        "metrics": {},
        "tasks": outcomes,
    }


def _display(sample: Sample | None, task_id: str) -> str:
    name = sample.metadata.get("task_name") if sample is not None else None
    return name if isinstance(name, str) else task_id


def _run(verdict: SampleVerdict, sample: Sample | None, position: int) -> dict[str, Any]:
    number = position
    if "#" in verdict.id and verdict.id.rsplit("#", 1)[1].isdigit():
        number = int(verdict.id.rsplit("#", 1)[1])
    status = "error" if verdict.status is Status.ERROR else ("passed" if verdict.passed else "failed")
    run: dict[str, Any] = {
        "run_number": number, "attempts": 1, "status": status,
        "duration_ms": int(sample.duration_ms or 0) if sample is not None else 0,
        "validations": {r.name: validation(r) for r in verdict.results if r.type != CHECKPOINT},
        "session_digest": _session(sample), "transcript": go_transcript(sample.transcript) if sample else [],
        "final_output": _text(sample.output) if sample is not None else "",
    }
    checkpoints = [checkpoint(r) for r in verdict.results if r.type == CHECKPOINT and r.details["checkpoint"]["status"]]
    if checkpoints:
        run["checkpoints"] = checkpoints
    if sample is not None and sample.workspace:
        run["workspace"] = sample.workspace
    if sample is not None and sample.outcome:
        run["outcome"] = sample.outcome
    return run


def validation(result: GraderResult) -> dict[str, Any]:
    """One result as waza's ``GraderResults``."""
    details = dict(result.details)
    if result.status in (Status.ERROR, Status.PENDING):
        details["assay_status"] = result.status.value
    if result.error is not None:
        details["assay_error"] = result.error.value
    return {"identifier": result.name, "type": PEER_TYPES.get(result.type, result.type),
            "score": result.score if result.score is not None else 0.0, "weight": result.weight,
            "passed": result.passed, "feedback": result.reason or "", "details": details,
            "duration_ms": int(round(result.latency_ms))}


def checkpoint(result: GraderResult) -> dict[str, Any]:
    """A ``waza_checkpoint`` result as waza's ``CheckpointOutcome`` (results schemaVersion 1.1)."""
    cp = result.details["checkpoint"]
    stopped = cp["on_failure"] == "stop" and cp["status"] != "passed"
    return {"after_turn": cp["after_turn"], "status": cp["status"], "stopped": stopped,
            "validations": {c["name"]: {"identifier": c["name"], "type": PEER_TYPES.get(c["type"], c["type"]),
                                        "score": c["score"] if c["score"] is not None else 0.0, "weight": c["weight"],
                                        "passed": c["status"] == "passed", "feedback": c["reason"] or ""}
                            for c in result.details["children"]}}


def _session(sample: Sample | None) -> dict[str, Any]:
    if sample is None:
        return {"tool_call_count": 0, "tools_used": [], "errors": []}
    recorded = sample.metadata.get("session_digest")
    if isinstance(recorded, dict):
        return recorded
    calls = [{"name": c.name, "arguments": c.arguments} for c in session_calls(sample)]
    digest: dict[str, Any] = {"tool_call_count": len(calls), "tools_used": [c["name"] for c in calls],
                              "tool_calls": calls,
                              "errors": [e.message or "" for e in sample.transcript if e.type == "error"]}
    counted = [e for e in sample.transcript if e.type == "token_usage"]
    if counted:
        digest["usage"] = {"input_tokens": sum(e.input_tokens or 0 for e in counted),
                           "output_tokens": sum(e.output_tokens or 0 for e in counted)}
    return digest


def _text(value: Any) -> str:
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)
