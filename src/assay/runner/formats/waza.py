"""waza suites: ``eval.yaml`` (``name``, ``skill``, ``config``, ``graders``, ``metrics``,
``tasks``) with task files matched by the ``tasks`` globs and scripts under ``graders/``.

assay grades runs; it does not execute agents. A task's graded output comes from, in order:

1. a results file: ``data["results"]`` (the CLI's ``--results``), else ``results.jsonl`` or
   ``results.json`` beside ``eval.yaml``. Records are keyed by ``task_id`` / ``id`` / ``task``
   and hold ``output``, ``transcript`` (any shape ``parse_transcript`` reads), ``outcome``,
   ``duration_ms``, ``workspace``; a waza EvalResult (``{"tasks": [{"id", "trials": [...]}]}``)
   works too. Several records (or trials) for one task become samples ``<id>#<n>``;
2. else the task's own ``inputs.output`` / ``inputs.transcript``.

Tasks with neither are listed in ``metadata["missing"]``. Task-level graders (type defaults
to ``code``, options beside ``type`` fold into ``config``) go to ``sample_graders``. As in
waza, a sample passes when every grader passes (no threshold) and its score is the
weighted mean.
"""

from __future__ import annotations

import glob
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from assay.core.context import SpecContext
from assay.core.errors import SpecError
from assay.core.spec import CompiledSpec
from assay.runner.formats._common import (
    YamlDoc,
    compile_grader,
    fold_grader,
    make_sample,
    open_suite,
    read_records,
    resolve_results,
)
from assay.runner.model import LoadedSuite

FORMAT = "waza"
TOP_KEYS = ("name", "description", "skill", "version", "schemaVersion", "config", "metrics", "graders",
            "tasks", "results", "cost_ordered")
TASK_KEYS = ("id", "name", "description", "inputs", "expected", "graders", "tags", "enabled",
             "timeout_seconds", "context_dir")
RESULT_FILES = ("results.jsonl", "results.json")
_RUN_KEYS = ("output", "transcript")


def detect(path: Path, data: Any) -> bool:
    """A waza suite: a mapping with a ``tasks`` list of globs (strings or ``{include: ...}``)."""
    if not isinstance(data, Mapping) or "stimuli" in data or not isinstance(data.get("tasks"), list):
        return False
    return all(isinstance(t, str) or (isinstance(t, Mapping) and "include" in t) for t in data["tasks"])


def load(path: Path, data: Any, context: SpecContext) -> LoadedSuite:
    """Load a waza suite. Raises SpecError naming file, line and field for invalid input."""
    doc, data, base = open_suite(path, data, "waza eval file")
    _known(doc, data, TOP_KEYS, ())
    context = context.at(base)
    graders = _graders(doc, data.get("graders"), ("graders",), context, default_type=None)
    tasks = _tasks(doc, data.get("tasks"), base, context)
    results_path = resolve_results(data.get("results"), base, RESULT_FILES)
    runs = _runs_by_task(results_path) if results_path else {}

    samples, sample_graders, missing = [], {}, []
    for tdoc, task, task_graders in tasks:
        tid = str(task["id"])
        inputs = task.get("inputs") or {}
        task_runs = runs.pop(tid, None)
        if task_runs is None and any(k in inputs for k in _RUN_KEYS):
            task_runs = [(tdoc.where("inputs"), inputs)]
        if not task_runs:
            missing.append(tid)
            continue
        meta = {"task": tid, "task_name": task.get("name"), "description": task.get("description"),
                "tags": task.get("tags") or [], "source": str(tdoc.path)}
        meta.update({k: v for k, v in inputs.items() if k not in ("prompt", *_RUN_KEYS)})
        for n, (where, run) in enumerate(task_runs, 1):
            sid = tid if len(task_runs) == 1 else f"{tid}#{run.get('trial_id', n)}"
            sample = make_sample(sid, run, input=inputs.get("prompt"), expected=task.get("expected"),
                                 metadata={k: v for k, v in meta.items() if v is not None}, base_dir=base,
                                 where=where)
            samples.append(sample)
            if task_graders:
                sample_graders[sid] = task_graders
    if not samples:
        hint = f"results file {results_path}" if results_path else \
            f"a results file (--results, or {' / '.join(RESULT_FILES)} beside eval.yaml)"
        raise SpecError(f"no graded outputs: none of {len(tasks)} task(s) has a run in {hint} "
                        "or an inputs.output in its task file", where=str(doc.path))
    config = data.get("config") or {}
    return LoadedSuite(
        name=str(data.get("name") or base.name), samples=samples, graders=graders,
        sample_graders=sample_graders, threshold=None,
        cost_ordered=bool(data.get("cost_ordered") or (isinstance(config, Mapping) and config.get("cost_ordered"))),
        source=doc.path, format=FORMAT,
        metadata={"skill": data.get("skill"), "description": data.get("description"),
                  "version": data.get("version"), "config": config, "metrics": data.get("metrics") or [],
                  "results": str(results_path) if results_path else None, "missing": missing,
                  "unmatched_results": sorted(runs)},
    )


def _known(doc: YamlDoc, data: Mapping[str, Any], known: tuple[str, ...], keys: tuple[str | int, ...]) -> None:
    for key in data:
        if key not in known:
            raise doc.error(f"unknown field {key!r} (known: {', '.join(known)})", *keys, key)


def _graders(doc: YamlDoc, raw: Any, keys: tuple[str | int, ...], context: SpecContext,
             default_type: str | None) -> list[CompiledSpec]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise doc.error("graders must be a list", *keys)
    out: list[CompiledSpec] = []
    seen: set[str] = set()
    for i, entry in enumerate(raw):
        at = (*keys, i)
        spec = compile_grader(fold_grader(entry, doc, at, default_type=default_type), doc, at, context)
        if spec.name in seen:
            raise doc.error(f"two graders are named {spec.name!r}; give each a distinct name", *at)
        seen.add(spec.name)
        out.append(spec)
    return out


def _tasks(doc: YamlDoc, raw: Any, base: Path,
           context: SpecContext) -> list[tuple[YamlDoc, Mapping[str, Any], list[CompiledSpec]]]:
    files: list[Path] = []
    for i, entry in enumerate(raw or []):
        pattern = entry.get("include") if isinstance(entry, Mapping) else entry
        if not isinstance(pattern, str) or not pattern:
            raise doc.error("a task entry must be a glob string or {include: glob}", "tasks", i)
        found = sorted(Path(p) for p in glob.glob(str(base / pattern), recursive=True))
        if not found:
            raise doc.error(f"no task files match {pattern!r} (relative to {base})", "tasks", i)
        files.extend(f for f in found if f not in files)
    if not files:
        raise doc.error("tasks must list at least one glob of task files", "tasks")
    out = []
    seen: dict[str, str] = {}
    for f in files:
        tdoc = YamlDoc(f)
        task = tdoc.data
        if not isinstance(task, Mapping):
            raise tdoc.error("a task file must be a mapping")
        _known(tdoc, task, TASK_KEYS, ())
        if task.get("id") is None or isinstance(task.get("id"), (dict, list, bool)):
            raise tdoc.error("a task needs an id (text)", "id")
        tid = str(task["id"])
        if tid in seen:
            raise tdoc.error(f"task id {tid!r} is also used in {seen[tid]}", "id")
        seen[tid] = tdoc.where("id")
        if task.get("inputs") is not None and not isinstance(task["inputs"], Mapping):
            raise tdoc.error("inputs must be a mapping", "inputs")
        if task.get("enabled", True) is False:
            continue
        out.append((tdoc, task, _graders(tdoc, task.get("graders"), ("graders",), context, default_type="code")))
    return out


def _runs_by_task(path: Path) -> dict[str, list[tuple[str, Mapping[str, Any]]]]:
    runs: dict[str, list[tuple[str, Mapping[str, Any]]]] = {}
    for where, rec in read_records(path):
        tid = next((rec[k] for k in ("task_id", "taskId", "id", "task") if rec.get(k) is not None), None)
        if tid is None:
            raise SpecError("a run record needs task_id (or id) naming its task", where=where)
        trials = rec.get("trials")
        if isinstance(trials, list):
            runs.setdefault(str(tid), []).extend((f"{where}.trials[{i}]", t) for i, t in enumerate(trials))
        else:
            runs.setdefault(str(tid), []).append((where, rec))
    return runs
