"""waza suites, Python and Go editions: ``eval.yaml`` (``name``, ``skill``, ``config``,
``graders``, ``metrics``, ``tasks`` globs or a ``tasks_from`` CSV) with task files and scripts
under ``graders/``.

assay grades runs; it does not execute agents. A task's graded output comes from, in order:

1. a results file: ``--results``, else the file's ``results`` key, else ``results.jsonl`` or
   ``results.json`` beside ``eval.yaml``, in any shape waza writes (``_waza_results``): Go's
   ``EvaluationOutcome`` or a ``--transcript-dir`` folder, Python's ``EvalResult``, or assay's run
   records. Several runs of one task become samples ``<id>#<n>``;
2. else the task's own ``inputs.output`` / ``inputs.transcript`` (an assay extension).

Tasks with neither are listed in ``Suite.missing``; records naming no task (nor a disabled
one) in ``Suite.unmatched_results``, with a warning. Task-level graders (type defaults to
``code``) go to ``sample_graders``. As in waza, a run passes when every grader passes (no
threshold) and its score is the weighted mean. The edition (``_waza_graders.edition_of``)
decides what ``code`` and ``script`` graders see.

Unknown keys anywhere in the files are ignored with a warning naming file and line, as both
waza editions ignore them (Go: ``yaml.v3`` and ``mapstructure`` decode leniently).
"""

from __future__ import annotations

import glob
from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

from pydantic import BeforeValidator, ConfigDict, Field

from assay.core.context import SpecContext
from assay.core.errors import SpecError
from assay.graders._waza_context import TASK_KEY
from assay.runner.suites.dialects import detect_waza
from assay.runner.suites.dialects._waza_graders import Edition, WazaGraders, edition_of
from assay.runner.suites.dialects._waza_results import read_waza_runs
from assay.runner.suites.dialects._waza_tasks import csv_tasks, python_task_dump
from assay.runner.suites.filemodel import FileModel, Text, read_model
from assay.runner.suites.graders import compile_graders
from assay.runner.suites.runs import Runs, find_results, make_sample, unmatched_warning
from assay.runner.suites.suite import Suite
from assay.runner.yamlsrc import YamlDoc

NAME = "waza"
RESULT_FILES = ("results.jsonl", "results.json")
_RUN_KEYS = ("output", "transcript")


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
    """Run settings (``config:``). assay runs no agent: it reads ``judge_model`` (the model of
    every ``prompt`` grader, as waza's runner injects it) and ``cost_ordered`` (an assay
    extension); the rest is kept as written."""

    model_config = ConfigDict(extra="allow")

    cost_ordered: bool = False
    judge_model: Text | None = None
    trials_per_task: Any = None
    timeout_seconds: Any = None
    parallel: Any = None
    max_workers: Any = None
    workers: Any = None
    fail_fast: Any = None
    verbose: Any = None
    executor: Any = None
    model: Any = None
    skill_directories: Any = None
    required_skills: Any = None
    mcp_servers: Any = None
    max_attempts: Any = None
    group_by: Any = None


class WazaFile(FileModel):
    """A waza ``eval.yaml`` (both editions). ``results`` and ``cost_ordered`` are assay extensions."""

    model_config = ConfigDict(extra="allow")

    name: Text | None = Field(default=None, description="Suite name (default: the folder's name).")
    description: Text | None = None
    skill: Text | None = None
    version: Text | None = None
    schemaVersion: Any = None  # waza's spelling
    config: WazaConfig | None = None
    hooks: Any = None
    inputs: dict[str, Any] | None = Field(default=None, description="Template variables for `tasks_from` prompts.")
    tasks_from: Text | None = Field(default=None, description="A CSV file whose rows are the tasks (Go edition).")
    range: list[int] | None = Field(default=None, description="`[first, last]` CSV rows of `tasks_from` (1-based).")
    baseline: Any = None
    metrics: Any = Field(default=None, description="Kept as written; assay computes no waza metrics.")
    graders: list[Any] | None = Field(default=None, description="Graders applied to every task.")
    tasks: list[Annotated[str, BeforeValidator(_task_glob)]] | None = Field(
        default=None, description="Globs of task files, relative to eval.yaml (`pattern` or `{include: pattern}`).")
    results: Text | None = Field(default=None, description="The results file to grade.")
    cost_ordered: bool = False


class WazaTask(FileModel):
    """A waza task file."""

    model_config = ConfigDict(extra="allow")

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


_Task = tuple[YamlDoc, WazaTask]


detect = detect_waza


def load(doc: YamlDoc, *, results: Path | None, context: SpecContext) -> Suite:
    """Load a waza suite. Raises SpecError naming file, line and field for invalid input."""
    warnings: list[str] = []
    spec = read_model(WazaFile, doc.data, doc, warnings=warnings)
    base = doc.path.parent.resolve()
    if spec.tasks is None and spec.tasks_from is None:
        raise doc.error("a waza eval needs `tasks` (globs of task files) or `tasks_from` (a CSV file)")
    tasks, disabled, task_files = _tasks(doc, spec, base, warnings)
    results_path = find_results(doc, results, spec.results, RESULT_FILES)
    runs, shapes = read_waza_runs(results_path) if results_path else ({}, set())
    kinds = {g.get("type", "code") for t in tasks for g in (t[1].graders or []) if isinstance(g, Mapping)}
    kinds |= {g.get("type") for g in spec.graders or [] if isinstance(g, Mapping)}
    edition = edition_of({k for k in kinds if isinstance(k, str)}, shapes, set(doc.data))
    judge = spec.config.judge_model if spec.config else None
    suite_graders = WazaGraders(doc, edition, judge, warnings=warnings)
    graders = compile_graders(spec.graders or [], doc, ("graders",), context, prepare=suite_graders.prepare)

    samples, sample_graders, missing = [], {}, []
    for tdoc, task in tasks:
        task_graders = compile_graders(task.graders or [], tdoc, ("graders",), context, prepare=WazaGraders(
            tdoc, edition, judge, default_type="code", warnings=warnings).prepare)
        inputs = task.inputs or {}
        task_runs = runs.pop(task.id, None)
        if task_runs is None and any(k in inputs for k in _RUN_KEYS):
            task_runs = [(tdoc.where("inputs"), inputs)]
        if not task_runs:
            missing.append(task.id)
            continue
        meta = _task_metadata(tdoc, task, edition)
        for n, (where, run) in enumerate(task_runs, 1):
            sid = task.id if len(task_runs) == 1 else f"{task.id}#{run.get('trial_id', n)}"
            samples.append(make_sample(sid, run, input=inputs.get("prompt"), expected=task.expected, metadata=meta,
                                       base_dir=base, where=where))
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


def _task_metadata(tdoc: YamlDoc, task: WazaTask, edition: Edition) -> dict[str, Any]:
    inputs = task.inputs or {}
    meta = {"task": task.id, "task_name": task.name, "description": task.description,
            "tags": task.tags or [], "source": str(tdoc.path)}
    meta.update({k: v for k, v in inputs.items() if k not in ("prompt", *_RUN_KEYS)})
    if edition == "python":
        meta[TASK_KEY] = python_task_dump(tdoc.data if isinstance(tdoc.data, Mapping) else {"id": task.id})
    return {k: v for k, v in meta.items() if v is not None}


def _tasks(doc: YamlDoc, spec: WazaFile, base: Path, warnings: list[str]) -> tuple[list[_Task], set[str], list[Path]]:
    """The enabled tasks, the ids of disabled ones, and the files they were read from."""
    if spec.tasks is None:
        return csv_tasks(doc, spec.tasks_from or "", spec.range, spec.inputs or {}, base), set(), []
    files: list[Path] = []
    for i, pattern in enumerate(spec.tasks):
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
        out.append((tdoc, task))
    return out, disabled, files


def runs_by_task(path: Path) -> Runs:
    """The runs in a waza results file, by task id (see ``_waza_results``)."""
    return read_waza_runs(path)[0]
