"""What ``vally eval`` writes, read back as runs to grade: where a run's files are, which
records in them are trajectories, and what assay keeps from Vally's events.

Layout (microsoft.github.io/vally/reference/cli/eval/, get-started/run-your-first-eval/,
reference/cli/experiment/): ``--output-dir`` (default ``./vally-results``) holds one
timestamped directory per run, with ``results.jsonl`` (one trial-result record per trial)
and ``run-summary.jsonl``; trajectories are saved as JSON
(microsoft.github.io/vally/reference/trajectory-format/). ``vally grade`` and ``vally compare``
take such a directory or a JSONL file and tell the record shapes apart by their keys
(reference/cli/grade/, reference/cli/compare/). Where the pages stop (the fields of a
trial-result record), the shapes accepted here are chosen to take what they may hold: a
trajectory, flat or under ``trajectory``, or a record holding a list of them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from assay.core.errors import SpecError
from assay.runner.suites.runs import Runs, read_records

RUN_FILES = ("results.jsonl", "results.json", "trajectories.jsonl", "trajectories.json", "trajectories")
"""The files of one run directory, in order of preference: the first present is read."""
SIBLINGS = ("trajectories.jsonl", "trajectories.json", "trajectories", "vally-results", "results")
"""Looked for beside the eval file when no results file is named: the first that is a file, or a
folder laid out as Vally writes runs (``RUN_FILES`` in it or in a timestamped folder in it)."""
SUMMARIES = frozenset({"run-summary.jsonl", "run-summary.json", "summary.json"})
"""Per-run summaries written beside the trial results: nothing in them is graded."""
TRAJECTORY_KEYS = ("events", "output")
"""A record holding either is a trajectory (``output`` may be null: an explicitly empty run)."""
LIST_KEYS = ("outcomes", "trials", "results", "trajectories", "runs")
"""A record holding a list under one of these keys holds trajectories (an EvalOutcome)."""
TRIAL_KEYS = ("trial", "trialIndex", "trial_index")
_TIMESTAMPED = re.compile(r"\d{4}-\d{2}-\d{2}")


def discover(folder: Path) -> Path | None:
    """The first of ``SIBLINGS`` beside the eval file that holds a run, if any (a folder of
    other files, such as assay's own results, is passed over)."""
    for name in SIBLINGS:
        path = folder / name
        if path.is_file():
            return path
        if path.is_dir() and (_holds_run_files(path) or any(
                d.is_dir() and _TIMESTAMPED.match(d.name) and _holds_run_files(d) for d in path.iterdir())):
            return path
    return None


def _holds_run_files(folder: Path) -> bool:
    return any((folder / name).exists() for name in RUN_FILES)


def locate(path: Path, warnings: list[str]) -> list[Path]:
    """The files of the Vally run at ``path``: the file itself; in a run directory its
    ``RUN_FILES`` (the first present), else its ``*.json`` / ``*.jsonl`` trajectories; in an
    output directory of timestamped runs the newest (with a warning naming it). Several runs
    not named by time (an experiment's variants) are an error: which one is meant?"""
    if not path.is_dir():
        return [path]
    for name in RUN_FILES:
        inner = path / name
        if inner.is_file():
            return [inner]
        if inner.is_dir():
            return _json_files(inner) or _no_run(inner)
    files = _json_files(path)
    if files:
        return files
    runs = sorted(d for d in path.iterdir() if d.is_dir() and _holds_run(d))
    if not runs:
        return _no_run(path)
    if len(runs) > 1:
        if not all(_TIMESTAMPED.match(d.name) for d in runs):
            raise SpecError(f"{len(runs)} runs here ({', '.join(d.name for d in runs)}); "
                            "point --results at one of them", where=str(path))
        warnings.append(f"{path}: {len(runs)} timestamped runs; grading the newest, {runs[-1].name} "
                        "(point --results at another run to grade it)")
    return locate(runs[-1], warnings)


def _no_run(path: Path) -> list[Path]:
    raise SpecError(f"no Vally run here: expected {', '.join(RUN_FILES)} or *.json trajectories", where=str(path))


def _json_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir()
                  if p.is_file() and p.suffix in (".json", ".jsonl") and p.name not in SUMMARIES)


def _holds_run(folder: Path) -> bool:
    return _holds_run_files(folder) or bool(_json_files(folder))


def read_runs(paths: Iterable[Path]) -> Runs:
    """Every trajectory in ``paths`` by stimulus name, each with where it was read, a
    stimulus's trials in trial order when every one gives it. Raises SpecError naming file and
    position for a record that is no known shape, or names no stimulus."""
    runs: Runs = {}
    for path in paths:
        for where, rec in read_records(path):
            for at, run in _trajectories(where, rec, None):
                runs.setdefault(_stimulus_name(at, run), []).append((at, with_event_summary(run)))
    for name, found in runs.items():
        trials = [t for _, run in found if (t := _trial(run)) is not None]
        if len(trials) == len(found):
            runs[name] = [r for _, r in sorted(zip(trials, found, strict=True), key=lambda pair: pair[0])]
    return runs


def _trajectories(where: str, rec: Mapping[str, Any], stimulus: Any) -> list[tuple[str, dict[str, Any]]]:
    """The trajectories one record holds: itself, the one under ``trajectory`` (its keys over
    the record's), or those in a list under ``LIST_KEYS`` (inheriting the record's stimulus)."""
    if "trajectory" in rec:
        if not isinstance(rec["trajectory"], Mapping):
            raise SpecError(f"trajectory must be an object, got {type(rec['trajectory']).__name__}", where=where)
        rec = {**rec, **rec["trajectory"]}
    if any(k in rec for k in TRAJECTORY_KEYS):
        if stimulus is not None and not any(k in rec for k in ("stimulus", "stimulusName", "stimulus_name")):
            rec = {**rec, "stimulus": stimulus}
        return [(where, dict(rec))]
    key = next((k for k in LIST_KEYS if isinstance(rec.get(k), list)), None)
    if key is None:
        shown = ", ".join(sorted(map(str, rec))[:12]) or "none"
        raise SpecError("not a Vally trajectory or trial result: a record needs events or output (a trajectory), "
                        f"a trajectory object, or a list of them under {' / '.join(LIST_KEYS)}; "
                        f"this one has keys: {shown}", where=where)
    out = []
    for i, item in enumerate(rec[key]):
        at = f"{where}.{key}[{i}]"
        if not isinstance(item, Mapping):
            raise SpecError(f"a trial result must be an object, got {type(item).__name__}", where=at)
        out.extend(_trajectories(at, item, rec.get("stimulus", stimulus)))
    return out


def _stimulus_name(where: str, rec: Mapping[str, Any]) -> str:
    stim = rec.get("stimulus")
    name = stim.get("name") if isinstance(stim, Mapping) else stim
    name = name or rec.get("stimulusName") or rec.get("stimulus_name") or rec.get("name")
    if not isinstance(name, str) or not name:
        raise SpecError("a trajectory needs stimulus.name naming its stimulus", where=where)
    return name


def _trial(rec: Mapping[str, Any]) -> int | None:
    value = next((rec[k] for k in TRIAL_KEYS if k in rec), None)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def with_event_summary(rec: Mapping[str, Any]) -> dict[str, Any]:
    """The run with what assay's transcript does not keep from Vally's events and record added to
    its ``metadata`` (the run's own ``metadata`` wins key by key): for Vally-shaped events
    (``{type, data}``, turn markers or ``skill_activation``) ``turns`` (``turn_end`` events) and
    ``skills`` (``skill_activation`` names); with turn markers ``tool_steps`` (each tool call's
    0-based turn); and the trajectory's ``metrics``. The completed, turn-count, token-budget,
    tool-calls and skill-invocation graders read them
    (microsoft.github.io/vally/reference/trajectory-format/). Events in other shapes add no
    turns or skills, so those graders fall back to the transcript."""
    events = rec.get("events")
    extra: dict[str, Any] = {}
    if isinstance(events, list):
        dicts = [e for e in events if isinstance(e, Mapping)]
        kinds = [e.get("type") for e in dicts]
        markers = "turn_start" in kinds or "turn_end" in kinds
        if markers or any(isinstance(e.get("data"), Mapping) for e in dicts):
            extra["turns"] = kinds.count("turn_end")
        if markers:  # each tool call's 0-based turn, for at_step
            starts = "turn_start" in kinds
            seen, steps = 0, []
            for kind in kinds:
                if kind == ("turn_start" if starts else "turn_end"):
                    seen += 1
                elif kind == "tool_call":
                    steps.append(max(seen - 1, 0) if starts else seen)
            extra["tool_steps"] = steps
        if "turns" in extra or "skill_activation" in kinds:
            extra["skills"] = [name for e in dicts if e.get("type") == "skill_activation"
                               if (name := _skill_name(e)) is not None]
    if isinstance(rec.get("metrics"), Mapping):
        extra["metrics"] = dict(rec["metrics"])
    if not extra:
        return dict(rec)
    meta = rec.get("metadata")
    return {**rec, "metadata": {**extra, **(meta if isinstance(meta, Mapping) else {})}}


def _skill_name(event: Mapping[str, Any]) -> str | None:
    data = event.get("data")
    if not isinstance(data, Mapping):
        data = event
    return next((data[k] for k in ("skillName", "skill", "name") if isinstance(data.get(k), str)), None)
