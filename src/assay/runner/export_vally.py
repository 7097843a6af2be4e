"""assay's verdicts in Vally's shapes, carrying what is needed to grade the runs again.

``export_vally(suite, verdicts)`` gives ``{name, summary, samples: [...]}``; each sample is a
trial result: the verdict (``verdict_to_vally``: ``{id, status, passed, score, weights,
graderResults}``, each grader result ``{name, passed, score, evidence, kind, metadata}``)
with ``stimulus``, ``trial`` and the run as a Vally trajectory under ``trajectory``
(``{id, stimulus, events, metrics, output, workDir, metadata}``,
microsoft.github.io/vally/reference/trajectory-format/). ``assay run SPEC --results FILE``
reads the file back (dialects/_vally_runs.py) into the same samples, so it gives the same
verdicts.

What assay's transcript does not keep of Vally's events (turn markers, skill activations)
lives in the sample's ``metadata`` (``turns``, ``tool_steps``, ``skills``); the export writes
it back both as events (``turn_start`` / ``turn_end`` placed around each tool call's turn,
``skill_activation``) and in ``metadata``. A run that had no Vally-shaped events exports its
events flat (``{type, timestamp, toolName, ...}``), so reading it back adds no turn count
it never had.

Neither tool has ``error`` or ``pending`` results, so those export with ``passed: false``,
``score: 0`` and assay's ``status`` and ``error`` code kept in ``metadata``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from assay.core.aggregate import SampleVerdict, summarize
from assay.core.result import GraderResult, Status
from assay.core.sample import Event, Sample
from assay.runner.suites.suite import Suite

_DURATION_KEYS = ("duration_ms", "durationMs", "wallTimeMs")


def export_vally(suite: Suite, verdicts: Sequence[SampleVerdict]) -> dict[str, Any]:
    """The graded suite as one Vally-shaped document: every verdict as a trial result holding
    its sample's trajectory (verdicts of samples the suite no longer has keep only the verdict)."""
    samples = {s.id: s for s in suite.samples}
    return {"name": suite.name, "summary": summarize(verdicts).to_dict(),
            "samples": [trial_result(v, samples.get(v.id)) for v in verdicts]}


def trial_result(verdict: SampleVerdict, sample: Sample | None) -> dict[str, Any]:
    """One verdict as a Vally trial result, with its sample as the trajectory when given."""
    out = verdict_to_vally(verdict)
    if sample is None:
        return out
    stimulus = sample.metadata.get("stimulus")
    stimulus = stimulus if isinstance(stimulus, str) and stimulus else sample.id
    out["stimulus"] = stimulus
    trial = re.fullmatch(re.escape(stimulus) + r"#(\d+)", sample.id)
    if trial:
        out["trial"] = int(trial.group(1))
    out["trajectory"] = trajectory(sample, stimulus)
    return out


def trajectory(sample: Sample, stimulus: str) -> dict[str, Any]:
    """A sample as a Vally trajectory, with ``metrics.wallTimeMs`` carrying its duration."""
    meta = sample.metadata
    out: dict[str, Any] = {"id": sample.id, "stimulus": {"name": stimulus, "prompt": sample.input},
                           "events": vally_events(sample.transcript, meta), "output": sample.output}
    metrics = dict(meta["metrics"]) if isinstance(meta.get("metrics"), Mapping) else None
    if sample.duration_ms is not None and (metrics or {}).get("wallTimeMs") != sample.duration_ms:
        metrics = {**(metrics or {}), "wallTimeMs": sample.duration_ms}
        for key in _DURATION_KEYS[:2]:
            metrics.pop(key, None)
    if metrics is not None:
        out["metrics"] = metrics
    if sample.workspace is not None:
        out["workDir"] = sample.workspace
    if sample.outcome is not None:
        out["outcome"] = sample.outcome
    out["metadata"] = dict(meta)
    return out


def vally_events(events: Sequence[Event], meta: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Events in Vally's trajectory shape ``{type, timestamp, data}`` when the run had
    Vally-shaped events (its metadata reports ``turns``), else flat; with turn markers when it
    had them (``tool_steps``) and its ``skill_activation`` events (``skills``)."""
    nested = "turns" in meta
    out = [_event(e, nested) for e in events]
    names = meta.get("skills")
    skills = [{"type": "skill_activation", **_body({"skillName": s}, nested)}
              for s in (names if isinstance(names, list) else []) if isinstance(s, str)]
    steps = meta.get("tool_steps")
    if nested and isinstance(meta.get("turns"), int) and isinstance(steps, list) \
            and all(isinstance(s, int) and not isinstance(s, bool) for s in steps):
        return _with_turns(out, skills, steps, meta["turns"])
    return skills + out


def _with_turns(events: list[dict[str, Any]], skills: list[dict[str, Any]], steps: list[int],
                turns: int) -> list[dict[str, Any]]:
    """``events`` inside turn markers: each tool call in the turn ``steps`` gives it (0-based),
    and as many ``turn_end`` as the run completed turns (the last turn stays open when it did
    not complete)."""
    def marker(kind: str, n: int) -> dict[str, Any]:
        return {"type": kind, "data": {"turnId": f"turn-{n + 1}"}}

    out, turn, calls = [marker("turn_start", 0), *skills], 0, iter(steps)
    for event in events:
        if event["type"] == "tool_call":
            step = next(calls, turn)
            while turn < step:
                out += [marker("turn_end", turn), marker("turn_start", turn + 1)]
                turn += 1
        out.append(event)
    closed = turn
    while closed < turns:
        out.append(marker("turn_end", closed))
        closed += 1
        if closed < turns:
            out.append(marker("turn_start", closed))
    return out


def _body(data: dict[str, Any], nested: bool) -> dict[str, Any]:
    data = {k: v for k, v in data.items() if v is not None}
    return {"data": data} if nested else data


def _event(e: Event, nested: bool) -> dict[str, Any]:
    """One event with Vally's field names. A tool result's error text goes under ``error``
    when the result says whether it succeeded, else under ``errorMessage`` (``error`` alone
    would read back as a failure)."""
    data: dict[str, Any]
    if e.type == "tool_call":
        data = {"toolName": e.name, "toolCallId": e.call_id, "arguments": e.arguments, "content": e.content}
    elif e.type == "tool_result":
        data = {"toolName": e.name, "toolCallId": e.call_id, "success": e.success, "result": e.result,
                "error" if e.success is not None else "errorMessage": e.message}
    elif e.type == "error":
        data = {"message": e.message}
    elif e.type == "token_usage":
        data = {"inputTokens": e.input_tokens, "outputTokens": e.output_tokens}
    else:
        data = {"content": e.content}
    head: dict[str, Any] = {"type": e.type}
    if e.timestamp is not None:
        head["timestamp"] = e.timestamp
    return {**head, **_body(data, nested)}


def _score(result: GraderResult) -> float:
    return result.score if result.score is not None else 0.0


def _evidence(result: GraderResult) -> str:
    if result.reason:
        return result.reason
    if result.status is Status.PENDING:
        return f"{result.name}: pending review"
    if result.status is Status.ERROR:
        return f"{result.name}: error ({result.error.value if result.error else 'unknown'})"
    return f"{result.name} {'passed' if result.passed else 'failed'}"


def result_to_vally(result: GraderResult) -> dict[str, Any]:
    """One result as Vally's GraderResult ``{name, passed, score, evidence, kind, metadata}``."""
    metadata: dict[str, Any] = {"type": result.type, "status": result.status.value, "weight": result.weight,
                                "latency_ms": result.latency_ms}
    if result.error is not None:
        metadata["error"] = result.error.value
    if result.details:
        metadata["details"] = result.details
    return {"name": result.name, "passed": result.passed, "score": _score(result),
            "evidence": _evidence(result), "kind": result.kind, "metadata": metadata}


def verdict_to_vally(verdict: SampleVerdict) -> dict[str, Any]:
    """A graded sample as a Vally outcome: its aggregate and the grader results in order."""
    return {
        "id": verdict.id, "status": verdict.status.value, "passed": verdict.passed,
        "score": verdict.score if verdict.score is not None else 0.0,
        "weights": {r.name: r.weight for r in verdict.results},
        "graderResults": [result_to_vally(r) for r in verdict.results],
    }
