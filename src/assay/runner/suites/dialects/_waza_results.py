"""waza results read back as runs to grade, in every shape waza writes, and nothing else.

- **Go edition, ``waza run -o results.json``** (``internal/models/outcome.go``,
  ``EvaluationOutcome``): ``{"tasks": [{"test_id", "runs": [{"run_number", "status",
  "final_output", "transcript", "session_digest", "duration_ms", "validations",
  "error_msg"}]}]}``. Every run is graded; several runs of one task become ``<id>#<run_number>``.
- **Go edition, ``--transcript-dir``** (``internal/models/transcript.go``, ``TaskTranscript``):
  one ``{"task_id", "final_output", "transcript", "session", "duration_ms", ...}`` per file; a
  folder of them is one run per file.
- **Python edition** (``waza/schemas/results.py``, ``EvalResult``): ``{"tasks": [{"id",
  "trials": [{"trial_id", "output", "transcript", "duration_ms", ...}]}]}``.
- **assay's run records**: ``{"task_id" | "id" | "task", "output" | "transcript", ...}`` per
  JSON line or list item.

A record of none of these shapes is an error naming where it is, never a run with an empty
output. Each run becomes a record for ``runs.make_sample``: ``output``, ``transcript``,
``duration_ms``, ``workspace``, ``outcome`` and ``metadata`` (the run's ``session_digest``,
which waza's behaviour graders read, its ``tool_events`` (schemaVersion 1.1 on), which the Go
``tool_calls`` argument matchers read before the digest, its ``checkpoints``, and its
``status`` / ``error_msg`` when waza recorded them). A ``schemaVersion`` of another major
version than 1 is refused, as waza refuses it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from assay.core.errors import SpecError
from assay.runner.suites.runs import Runs, read_records

Shape = Literal["go", "python", "assay"]
_ID_KEYS = ("task_id", "taskId", "id", "task")
_RUN_KEYS = ("output", "transcript", "final_output", "events")
_SCHEMA = re.compile(rb'"schemaVersion"\s*:\s*"([^"]*)"')
_KNOWN = ("a waza task outcome {test_id, runs: [...]}, a waza transcript {task_id, final_output, transcript}, "
          "a waza task result {id, trials: [...]} or a run record {task_id, output | transcript}")


def read_waza_runs(path: Path) -> tuple[Runs, set[Shape], str | None]:
    """The runs in a waza results file (or folder of transcript files), by task id, the
    shapes found and the file's ``schemaVersion`` (None when it has none). Raises SpecError
    naming file and position for a record of no known shape, or for a schemaVersion of
    another major version than waza's 1.x (``models.ValidateSchemaVersion``)."""
    runs: Runs = {}
    shapes: set[Shape] = set()
    schema = _schema_version(path)
    for where, rec in read_records(path):
        shape, task_id, task_runs = _task_runs(where, rec)
        shapes.add(shape)
        runs.setdefault(task_id, []).extend(task_runs)
    return runs, shapes, schema


def _schema_version(path: Path) -> str | None:
    """A results.json's top-level ``schemaVersion`` (waza writes it from schema 1.0)."""
    if path.is_dir() or path.suffix != ".json":
        return None
    with path.open("rb") as f:
        head = f.read(1 << 16)  # the top-level key; runs and tasks carry none of their own
    found = _SCHEMA.search(head)
    if found is None:
        return None
    version = found[1].decode()
    major = version.split(".")[0]
    if major != "1":
        raise SpecError(f"results.json {path} uses schemaVersion {version!r}, but waza's results are schemaVersion "
                        "1.x; run \"waza migrate <file>\" to migrate the artifact file", where=str(path))
    return version


def _task_runs(where: str, rec: Mapping[str, Any]) -> tuple[Shape, str, list[tuple[str, Mapping[str, Any]]]]:
    if "test_id" in rec and isinstance(rec.get("runs"), list):
        return "go", _id(rec["test_id"], where, "test_id"), [
            (f"{where}.runs[{i}]", _go_run(run, f"{where}.runs[{i}]")) for i, run in enumerate(rec["runs"])]
    if "task_id" in rec and any(k in rec for k in ("final_output", "session", "validations")):
        return "go", _id(rec["task_id"], where, "task_id"), [(where, _go_transcript(rec))]
    if isinstance(rec.get("trials"), list) and rec.get("id") is not None:
        return "python", _id(rec["id"], where, "id"), [
            (f"{where}.trials[{i}]", _python_trial(trial, f"{where}.trials[{i}]"))
            for i, trial in enumerate(rec["trials"])]
    task_id = next((rec[k] for k in _ID_KEYS if rec.get(k) is not None), None)
    if task_id is not None and any(k in rec for k in _RUN_KEYS):
        return "assay", _id(task_id, where, "task_id"), [(where, rec)]
    found = ", ".join(sorted(map(str, rec))[:8]) or "no keys"
    raise SpecError(f"not a waza results record (it has {found}); expected {_KNOWN}", where=where)


def _id(value: Any, where: str, key: str) -> str:
    if isinstance(value, (Mapping, list, bool)) or value in (None, ""):
        raise SpecError(f"{key} must name a task, got {value!r}", where=where)
    return str(value)


def _go_run(run: Any, where: str) -> dict[str, Any]:
    if not isinstance(run, Mapping):
        raise SpecError(f"a run must be an object, got {type(run).__name__}", where=where)
    if not any(k in run for k in ("final_output", "transcript", "status", "validations")):
        raise SpecError(f"not a waza run (it has {', '.join(sorted(map(str, run))[:8]) or 'no keys'}); "
                        "expected {run_number, status, final_output, transcript, session_digest, ...}", where=where)
    out = _common(run, run.get("session_digest"))
    if run.get("run_number") is not None:
        out["trial_id"] = run["run_number"]
    return out


def _go_transcript(rec: Mapping[str, Any]) -> dict[str, Any]:
    return _common(rec, rec.get("session"))


def _common(rec: Mapping[str, Any], session: Any) -> dict[str, Any]:
    """A Go-edition run or transcript file as a run record."""
    metadata: dict[str, Any] = {}
    if isinstance(session, Mapping) and session:
        metadata["session_digest"] = dict(session)
    for key in ("status", "error_msg"):
        if rec.get(key):
            metadata[f"waza_{key}"] = rec[key]
    for key in ("tool_events", "checkpoints"):  # results schemaVersion 1.1 on
        if isinstance(rec.get(key), list):
            metadata[key] = rec[key]
    out: dict[str, Any] = {"output": rec.get("final_output") or "", "transcript": rec.get("transcript") or [],
                           "metadata": metadata}
    for key in ("duration_ms", "workspace", "outcome"):
        if rec.get(key) is not None:
            out[key] = rec[key]
    return out


def _python_trial(trial: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(trial, Mapping):
        raise SpecError(f"a trial must be an object, got {type(trial).__name__}", where=where)
    if not any(k in trial for k in ("output", "transcript", "status", "grader_results")):
        raise SpecError("not a waza trial; expected {trial_id, status, output, transcript, ...}", where=where)
    out = dict(trial)
    if trial.get("output") is None:
        out["output"] = ""
    if trial.get("status") or trial.get("error"):
        out["metadata"] = {**({"waza_status": trial["status"]} if trial.get("status") else {}),
                           **({"waza_error_msg": trial["error"]} if trial.get("error") else {})}
    return out
