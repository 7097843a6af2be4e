"""waza suites: ``eval.yaml`` (``name``, ``skill``, ``config``, ``graders``, ``metrics``,
``tasks``) with task files matched by the ``tasks`` globs and scripts under ``graders/``.

assay grades runs; it does not execute agents. A task's graded output comes from, in order:

1. a results file: ``--results``, else the file's ``results`` key, else ``results.jsonl`` or
   ``results.json`` beside ``eval.yaml``. Records are keyed by ``task_id`` / ``id`` / ``task``
   and hold ``output``, ``transcript`` (any shape ``parse_transcript`` reads), ``outcome``,
   ``duration_ms``, ``workspace``; a waza EvalResult (``{"tasks": [{"id", "trials": [...]}]}``)
   works too. Several records (or trials) for one task become samples ``<id>#<n>``;
2. else the task's own ``inputs.output`` / ``inputs.transcript``.

Tasks with neither are listed in ``Suite.missing``; records naming no task (nor a disabled
one) in ``Suite.unmatched_results``, with a warning. Task-level graders (type defaults to
``code``, options beside ``type`` fold into ``config``) go to ``sample_graders``. As in waza,
a sample passes when every grader passes (no threshold) and its score is the weighted mean.

Unknown keys in ``eval.yaml``, a task file or a grader entry are errors, as in waza (its Go
edition decodes strictly); under ``config`` (run settings assay does not use) they are
ignored with a warning.
"""

from __future__ import annotations

import glob
import json
from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import Annotated, Any

from pydantic import BeforeValidator, ConfigDict, Field

from assay.core.context import SpecContext
from assay.core.errors import SpecError
from assay.core.spec import CompiledSpec
from assay.runner.suites.filemodel import FileModel, Text, read_model
from assay.runner.suites.graders import compile_graders, fold_grader
from assay.runner.suites.runs import Runs, find_results, make_sample, read_records, unmatched_warning
from assay.runner.suites.suite import Suite
from assay.runner.yamlsrc import YamlDoc

NAME = "waza"
RESULT_FILES = ("results.jsonl", "results.json")
_RUN_KEYS = ("output", "transcript")
GO_KINDS = {"text": "waza_text", "file": "waza_file", "diff": "waza_diff", "behavior": "waza_behavior",
            "action_sequence": "waza_action_sequence", "skill_invocation": "waza_skill_invocation",
            "tool_constraint": "waza_tool_constraint"}
"""waza (Go edition) grader kinds with semantics of their own, and the assay graders that
implement them (see docs/formats.md)."""


def _task_glob(value: Any) -> Any:
    pattern = value.get("include") if isinstance(value, Mapping) else value
    if not isinstance(pattern, str) or not pattern:
        raise ValueError("a task entry must be a glob string or {include: glob}")
    return pattern


def _task_id(value: Any) -> Any:
    if value is None or isinstance(value, (Mapping, list, bool)):
        raise ValueError("a task needs an id (text)")
    return str(value)


class WazaConfig(FileModel):
    """Run settings (``config:``). assay runs no agent, so it reads only ``cost_ordered`` (an
    assay extension); a key neither waza edition knows is ignored, with a warning."""

    model_config = ConfigDict(extra="allow")

    cost_ordered: bool = False
    trials_per_task: Any = None
    timeout_seconds: Any = None
    parallel: Any = None
    max_workers: Any = None
    workers: Any = None
    fail_fast: Any = None
    verbose: Any = None
    executor: Any = None
    model: Any = None
    judge_model: Any = None
    skill_directories: Any = None
    required_skills: Any = None
    mcp_servers: Any = None
    max_attempts: Any = None
    group_by: Any = None


class WazaFile(FileModel):
    """A waza ``eval.yaml``. ``results`` and ``cost_ordered`` are assay extensions."""

    name: Text | None = Field(default=None, description="Suite name (default: the folder's name).")
    description: Text | None = None
    skill: Text | None = None
    version: Text | None = None
    schemaVersion: Any = None  # waza's spelling
    config: WazaConfig | None = None
    metrics: Any = Field(default=None, description="Kept as written; assay computes no waza metrics.")
    graders: list[Any] | None = Field(default=None, description="Graders applied to every task.")
    tasks: list[Annotated[str, BeforeValidator(_task_glob)]] = Field(
        min_length=1, description="Globs of task files, relative to eval.yaml (`pattern` or `{include: pattern}`).")
    results: Text | None = Field(default=None, description="The results file to grade.")
    cost_ordered: bool = False


class WazaTask(FileModel):
    """A waza task file."""

    id: Annotated[str, BeforeValidator(_task_id)]
    name: Text | None = None
    description: Text | None = None
    inputs: dict[str, Any] | None = Field(
        default=None, description="`prompt` is the sample's input; `output`/`transcript` a run (assay extension).")
    expected: Any = None
    graders: list[Any] | None = None
    tags: Any = None
    enabled: bool | None = Field(default=True, strict=True, description="`false` skips the task.")
    timeout_seconds: Any = None
    context_dir: Any = None


_Task = tuple[YamlDoc, WazaTask, list[CompiledSpec]]


def detect(data: Mapping[str, Any]) -> bool:
    """A waza suite: a ``tasks`` list of globs (strings or ``{include: ...}``), no ``stimuli``."""
    if "stimuli" in data or not isinstance(data.get("tasks"), list):
        return False
    return all(isinstance(t, str) or (isinstance(t, Mapping) and "include" in t) for t in data["tasks"])


def load(doc: YamlDoc, *, results: Path | None, context: SpecContext) -> Suite:
    """Load a waza suite. Raises SpecError naming file, line and field for invalid input."""
    warnings: list[str] = []
    spec = read_model(WazaFile, doc.data, doc, warnings=warnings)
    base = doc.path.parent.resolve()
    graders = compile_graders(spec.graders or [], doc, ("graders",), context, prepare=partial(_prepare, doc))
    tasks, disabled, task_files = _tasks(doc, spec.tasks, base, context, warnings)
    results_path = find_results(doc, results, spec.results, RESULT_FILES)
    runs = _runs_by_task(results_path) if results_path else {}

    samples, sample_graders, missing = [], {}, []
    for tdoc, task, task_graders in tasks:
        inputs = task.inputs or {}
        task_runs = runs.pop(task.id, None)
        if task_runs is None and any(k in inputs for k in _RUN_KEYS):
            task_runs = [(tdoc.where("inputs"), inputs)]
        if not task_runs:
            missing.append(task.id)
            continue
        meta = {"task": task.id, "task_name": task.name, "description": task.description,
                "tags": task.tags or [], "source": str(tdoc.path)}
        meta.update({k: v for k, v in inputs.items() if k not in ("prompt", *_RUN_KEYS)})
        for n, (where, run) in enumerate(task_runs, 1):
            sid = task.id if len(task_runs) == 1 else f"{task.id}#{run.get('trial_id', n)}"
            samples.append(make_sample(sid, run, input=inputs.get("prompt"), expected=task.expected,
                                       metadata={k: v for k, v in meta.items() if v is not None}, base_dir=base,
                                       where=where))
            if task_graders:
                sample_graders[sid] = task_graders
    if not samples:
        hint = f"results file {results_path}" if results_path else \
            f"a results file (--results, or {' / '.join(RESULT_FILES)} beside eval.yaml)"
        raise SpecError(f"no graded outputs: none of {len(tasks)} task(s) has a run in {hint} "
                        "or an inputs.output in its task file", where=str(doc.path))
    unmatched = sorted(set(runs) - disabled)
    if unmatched:
        warnings.append(unmatched_warning(unmatched, results_path, "task"))
    return Suite(
        name=spec.name or base.name, samples=samples, graders=graders, sample_graders=sample_graders,
        threshold=None, cost_ordered=spec.cost_ordered or (spec.config is not None and spec.config.cost_ordered),
        dialect=NAME, source=doc.path, definition=spec,
        inputs=[doc.path, *task_files, *([results_path] if results_path else [])],
        missing=missing, unmatched_results=unmatched, warnings=warnings)


def _tasks(doc: YamlDoc, globs: list[str], base: Path, context: SpecContext,
           warnings: list[str]) -> tuple[list[_Task], set[str], list[Path]]:
    """The enabled tasks with their compiled graders, the ids of disabled ones, and the files."""
    files: list[Path] = []
    for i, pattern in enumerate(globs):
        found = sorted(Path(p) for p in glob.glob(str(base / pattern), recursive=True))
        if not found:
            raise doc.error(f"no task files match {pattern!r} (relative to {base})", "tasks", i)
        files.extend(f for f in found if f not in files)
    out: list[_Task] = []
    disabled: set[str] = set()
    seen: dict[str, str] = {}
    for f in files:
        tdoc = YamlDoc(f)
        if not isinstance(tdoc.data, Mapping):
            raise tdoc.error("a task file must be a mapping")
        task = read_model(WazaTask, tdoc.data, tdoc, warnings=warnings)
        if task.id in seen:
            raise tdoc.error(f"task id {task.id!r} is also used in {seen[task.id]}", "id")
        seen[task.id] = tdoc.where("id")
        if task.enabled is False:
            disabled.add(task.id)
            continue
        prepare = partial(_prepare, tdoc, default_type="code")
        out.append((tdoc, task, compile_graders(task.graders or [], tdoc, ("graders",), context, prepare=prepare)))
    return out, disabled, files


def _prepare(doc: YamlDoc, entry: Any, keys: Any, *, default_type: str | None = None) -> dict[str, Any]:
    """A waza grader entry as an assay spec: options folded into ``config``, then waza's
    ``prompt`` grader given its own semantics. waza's prompt grader (internal/graders/
    prompt_grader.go, docs/graders/prompt.md) scores pass/fail tool calls, so it becomes
    ``scoring: checks``; its ``mode: pairwise`` judges baseline against output twice with
    positions swapped and turns a position-inconsistent verdict into a passing tie, so it
    becomes the ``pairwise`` grader with ``flip_passes: true``."""
    spec = fold_grader(doc, entry, keys, default_type=default_type)
    if spec.get("type") in GO_KINDS:
        return {**spec, "type": GO_KINDS[spec["type"]]}
    if spec.get("type") == "json_schema" and "schema_file" in spec["config"]:
        return {**spec, "config": _schema_file(doc, spec["config"], keys)}
    if spec.get("type") != "prompt":
        return spec
    config = dict(spec["config"])
    mode = config.pop("mode", None)
    if mode == "pairwise":
        config.pop("continue_session", None)
        config.setdefault("flip_passes", True)
        return {**spec, "type": "pairwise", "config": config}
    if mode not in (None, "independent"):
        config["mode"] = mode  # left for the config model to refuse, naming the field
    config.setdefault("scoring", "checks")
    return {**spec, "config": config}


def _schema_file(doc: YamlDoc, config: dict[str, Any], keys: Any) -> dict[str, Any]:
    """waza's ``json_schema`` ``schema_file`` (internal/graders/json_schema_grader.go): a JSON
    schema read from a file (relative to the file naming it, else the current directory),
    used when no inline ``schema`` is given."""
    config = dict(config)
    name = config.pop("schema_file")
    if "schema" in config:
        return config
    if not isinstance(name, str) or not name:
        raise doc.error("schema_file must be a path", *keys, "config", "schema_file")
    path = next((p for p in (doc.path.parent / name, Path(name)) if p.is_file()), None)
    if path is None:
        raise doc.error(f"schema file {name!r} not found (relative to {doc.path.parent})", *keys, "config",
                        "schema_file")
    try:
        config["schema"] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise doc.error(f"cannot read schema file {path}: {exc}", *keys, "config", "schema_file") from None
    return config


def _runs_by_task(path: Path) -> Runs:
    runs: Runs = {}
    for where, rec in read_records(path):
        tid = next((rec[k] for k in ("task_id", "taskId", "id", "task") if rec.get(k) is not None), None)
        if tid is None:
            raise SpecError("a run record needs task_id (or id) naming its task", where=where)
        trials = rec.get("trials")
        if isinstance(trials, list):
            task_runs = runs.setdefault(str(tid), [])
            for i, trial in enumerate(trials):
                if not isinstance(trial, Mapping):
                    raise SpecError(f"a trial must be an object, got {type(trial).__name__}",
                                    where=f"{where}.trials[{i}]")
                task_runs.append((f"{where}.trials[{i}]", trial))
        else:
            runs.setdefault(str(tid), []).append((where, rec))
    return runs
