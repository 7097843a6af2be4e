"""Helpers shared by the suite-format loaders: YAML with line numbers, grader specs compiled
with their file and line, and run records read from results files."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from assay.core.context import SpecContext
from assay.core.errors import SpecError, format_loc
from assay.core.sample import Sample
from assay.core.spec import CompiledSpec, compile_spec
from assay.core.transcript import TranscriptError, parse_transcript
from assay.runner.dataset._json import BadJson, jsonl_rows, parse_json
from assay.runner.files import open_regular, read_regular
from assay.runner.yamlsrc import YamlDoc

SPEC_KEYS = ("type", "name", "config", "weight")
MAX_RECORDS_BYTES = 1024 * 1024 * 1024
"""Largest JSON results document read whole (JSON Lines files stream, with no limit)."""


def open_suite(path: Path, data: Any, what: str) -> tuple[YamlDoc, Mapping[str, Any], Path]:
    """The suite file behind ``path`` (a file or its directory): its document, its top-level
    mapping, and the directory relative paths resolve against."""
    eval_path = path / "eval.yaml" if path.is_dir() else path
    doc = YamlDoc(eval_path, data)
    if not isinstance(doc.data, Mapping):
        raise doc.error(f"a {what} must be a mapping")
    return doc, doc.data, eval_path.parent.resolve()


def fold_grader(entry: Any, doc: YamlDoc, keys: tuple[str | int, ...], *,
                default_type: str | None = None) -> dict[str, Any]:
    """A grader entry as a spec ``{type, name, config, weight}``: options written beside
    ``type`` (waza writes ``assertions``, ``script``, ``model``, ``rubric`` there) move into
    ``config``."""
    if not isinstance(entry, Mapping):
        raise doc.error(f"a grader must be a mapping, got {type(entry).__name__}", *keys)
    spec = {k: entry[k] for k in SPEC_KEYS if k in entry}
    if "type" not in spec and default_type:
        spec["type"] = default_type
    config = spec.get("config")
    if config is None:
        config = {}
    elif not isinstance(config, Mapping):
        raise doc.error("config must be a mapping", *keys, "config")
    config = dict(config)
    for key, value in entry.items():
        if key in SPEC_KEYS:
            continue
        if key in config:
            raise doc.error(f"{key!r} is given both beside type and inside config; keep one", *keys, key)
        config[key] = value
    spec["config"] = config
    return spec


def compile_grader(spec: dict[str, Any], doc: YamlDoc, keys: tuple[str | int, ...],
                   context: SpecContext) -> CompiledSpec:
    """Compile a spec under ``context`` (whose ``base_dir`` is the suite folder), naming file,
    line and field path on error."""
    try:
        return compile_spec(spec, path=format_loc(keys), context=context)
    except SpecError as exc:
        raise SpecError(exc.message, path=exc.path, where=doc.where(exc.focus or format_loc(keys))) from None


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


def resolve_results(raw: Any, suite_dir: Path, siblings: Sequence[str]) -> Path | None:
    """The results file: the given path (relative to the current directory, else to the
    suite directory), else the first sibling of the suite file that exists."""
    if raw:
        p = Path(str(raw))
        if p.is_absolute() or p.exists():
            return p
        alt = suite_dir / p
        if alt.exists():
            return alt
        raise SpecError(f"results file {raw} not found (looked in the current directory and {suite_dir})")
    for name in siblings:
        candidate = suite_dir / name
        if candidate.exists():
            return candidate
    return None


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
    extra = run.get("metadata") if isinstance(run.get("metadata"), Mapping) else {}
    duration = _first(run, "duration_ms", "durationMs")
    if duration is None and isinstance(run.get("metrics"), Mapping):
        duration = _first(run["metrics"], "duration_ms", "durationMs", "wallTimeMs")
    outcome = run.get("outcome")
    try:
        return Sample(id=sample_id, input=input, output=run.get("output"), expected=expected,
                      metadata={**metadata, **extra}, transcript=transcript,
                      outcome=outcome if isinstance(outcome, Mapping) else None,
                      duration_ms=duration, workspace=workspace)
    except ValueError as exc:
        raise SpecError(f"invalid run record: {exc}", where=where) from None


def _first(d: Mapping[str, Any], *keys: str) -> Any:
    for k in keys:
        if d.get(k) is not None:
            return d[k]
    return None
