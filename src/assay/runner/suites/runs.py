"""Recorded runs for the peer dialects: the results file a suite's outputs come from, its run
records, and a run record made into a Sample. (assay grades runs; it does not execute agents.)"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from assay.core.errors import SpecError
from assay.core.sample import Sample
from assay.core.transcript import TranscriptError, parse_transcript
from assay.runner.dataset import BadJson, jsonl_rows, parse_json
from assay.runner.files import open_regular, read_regular
from assay.runner.yamlsrc import YamlDoc

MAX_RECORDS_BYTES = 1024 * 1024 * 1024
"""Largest JSON results document read whole (JSON Lines files stream, with no limit)."""
MAX_NAMED = 20
"""Most ids a warning lists before it counts the rest."""

Runs = dict[str, list[tuple[str, Mapping[str, Any]]]]
"""Run records by the id of their task (or stimulus), each with where it was read."""


def find_results(doc: YamlDoc, given: Path | None, written: str | None, siblings: Sequence[str]) -> Path | None:
    """The results file for the suite in ``doc``: ``given`` by the caller (``--results``), else
    ``written`` in the suite file (its ``results`` key), each tried against the current
    directory and then the suite's folder; else the first of ``siblings`` beside the suite."""
    folder = doc.path.parent.resolve()
    if given is not None:
        return _existing(given, folder)
    if written:
        try:
            return _existing(Path(written), folder)
        except SpecError as exc:
            raise doc.error(exc.message, "results") from None
    return next((folder / name for name in siblings if (folder / name).exists()), None)


def _existing(path: Path, folder: Path) -> Path:
    if path.is_absolute() or path.exists():
        return path
    if (folder / path).exists():
        return folder / path
    raise SpecError(f"results file {path} not found (looked in the current directory and {folder})")


def read_records(path: Path) -> list[tuple[str, dict[str, Any]]]:
    """Run records from a results file: JSON lines, a JSON list, a JSON object holding a list
    (``results``, ``runs``, ``trajectories``, ``samples``, ``tasks``) or a directory of ``*.json`` files.
    Returns ``(where, record)`` pairs."""
    if path.is_dir():
        out = []
        for f in sorted(path.glob("*.json")):
            out.extend(read_records(f))
        return out
    if path.suffix == ".jsonl":
        with open_regular(path, what="results file") as fh:
            rows = [(f"{path}:{n}", row) for n, row in jsonl_rows(fh, path)]
    else:
        if path.suffix == ".json":
            raw = read_regular(path, limit=MAX_RECORDS_BYTES, what="results file")
            try:
                doc = parse_json(raw)
            except (BadJson, UnicodeDecodeError) as exc:
                raise SpecError(f"cannot parse results: {exc}", where=str(path)) from None
        else:
            doc = YamlDoc(path).data
        if isinstance(doc, Mapping):
            key = next((k for k in ("results", "runs", "trajectories", "samples", "tasks")
                        if isinstance(doc.get(k), list)), None)
            doc = doc[key] if key else [doc]
        if not isinstance(doc, list):
            raise SpecError("results must be a list of run records", where=str(path))
        rows = [(f"{path}[{i}]", r) for i, r in enumerate(doc)]
    for where, row in rows:
        if not isinstance(row, Mapping):
            raise SpecError(f"a run record must be an object, got {type(row).__name__}", where=where)
    return rows


def unmatched_warning(ids: Sequence[str], results: Path | None, noun: str) -> str:
    """The warning for records whose ``noun`` (task, stimulus) id names none in the suite."""
    named = ", ".join(repr(i) for i in ids[:MAX_NAMED])
    more = f" and {len(ids) - MAX_NAMED} more" if len(ids) > MAX_NAMED else ""
    return (f"{results}: records for {len(ids)} {noun} id(s) that match no {noun} of this suite were not "
            f"graded: {named}{more} (a typo in an id?)")


def make_sample(sample_id: str, run: Mapping[str, Any], *, input: Any, expected: Any,
                metadata: dict[str, Any], base_dir: Path, where: str) -> Sample:
    """A Sample from one run record ``{output, transcript | events | trajectory, outcome,
    duration_ms, workspace | workDir, metadata}``."""
    try:
        transcript = parse_transcript(_first(run, "transcript", "events", "trajectory") or [])
    except TranscriptError as exc:
        raise SpecError(str(exc), where=where) from None
    workspace = _first(run, "workspace", "workDir", "work_dir")
    if workspace is not None:
        workspace = str((base_dir / str(workspace)).resolve())
    extra = run.get("metadata")
    if not isinstance(extra, Mapping):
        extra = {}
    duration = _first(run, "duration_ms", "durationMs")
    if duration is None and isinstance(run.get("metrics"), Mapping):
        duration = _first(run["metrics"], "duration_ms", "durationMs", "wallTimeMs")
    outcome = run.get("outcome")
    try:
        return Sample(id=sample_id, input=input, output=run.get("output"), expected=expected,
                      metadata={**metadata, **extra}, transcript=transcript,
                      outcome=dict(outcome) if isinstance(outcome, Mapping) else None,
                      duration_ms=duration, workspace=workspace)
    except ValueError as exc:
        raise SpecError(f"invalid run record: {exc}", where=where) from None


def _first(d: Mapping[str, Any], *keys: str) -> Any:
    for k in keys:
        if d.get(k) is not None:
            return d[k]
    return None
