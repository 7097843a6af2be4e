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

The Go edition is read as one release (``_waza_releases``: ``--waza-version``, else the
``waza_version`` key, else the newest under which the suite loads, with a warning when that is
not the newest assay knows). From 0.24 waza decodes every file with known
fields only, so an unknown key is an error in waza's words (``field x not found in type
models.TestCase``); for older releases and the Python edition it is a warning naming file and
line. Fields waza defines in any release are never called unknown. From 0.27 a task's
``expected.output_contains`` / ``output_not_contains`` / ``output_contains_any`` are graded as
results of their own (``waza_expected``). A task's ``checkpoints`` (Go edition) are graded on the
run as it stood after their turn (``_waza_checkpoints``, ``waza_checkpoint``). Task globs fail
only when no pattern matches a file.
"""

from __future__ import annotations

import glob
from collections.abc import Mapping
from collections.abc import Set as AbstractSet
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from assay.core.context import SpecContext
from assay.core.errors import SpecError
from assay.graders import TASK_KEY
from assay.runner.suites.dialects import detect_waza
from assay.runner.suites.dialects._waza_agents import agent_grader
from assay.runner.suites.dialects._waza_checkpoints import checkpoint_specs
from assay.runner.suites.dialects._waza_files import WazaEvalFile, WazaExpectation, WazaInputs, WazaTask
from assay.runner.suites.dialects._waza_graders import Edition, WazaGraders, edition_of
from assay.runner.suites.dialects._waza_inference import alternatives, infer
from assay.runner.suites.dialects._waza_kinds import GO_TOOL_CALLS
from assay.runner.suites.dialects._waza_releases import Release, ReleaseRefusal, choose
from assay.runner.suites.dialects._waza_results import read_waza_runs
from assay.runner.suites.dialects._waza_semantics import (
    check_required_config,
    more_documents,
    per_task,
    replace_by_name,
)
from assay.runner.suites.dialects._waza_tasks import csv_tasks, python_task_dump, task_prompt
from assay.runner.suites.filemodel import Keys, Unknown, read_model
from assay.runner.suites.graders import compile_graders
from assay.runner.suites.runs import find_results, make_sample, unmatched_warning
from assay.runner.suites.suite import DialectOptions, Suite
from assay.runner.yamlsrc import YamlDoc

NAME = "waza"
RESULT_FILES = ("results.jsonl", "results.json")
_RUN_KEYS = ("output", "transcript")


_Task = tuple[YamlDoc, WazaTask]


detect = detect_waza


def load(doc: YamlDoc, *, results: Path | None, context: SpecContext,
         options: DialectOptions | None = None) -> Suite:
    """Load a waza suite. Raises SpecError naming file, line and field for invalid input.

    A release that is pinned (``--waza-version``, else the ``waza_version`` key) is the one read;
    else the newest release under which the suite loads (``_waza_inference``)."""
    options = options or DialectOptions()
    raw_version = doc.data.get("waza_version") if isinstance(doc.data, Mapping) else None
    pinned = options.waza_version is not None or raw_version is not None

    def load_as(release: Release) -> Suite:
        return _load_as(doc, release, pinned=pinned, results=results, context=context)

    def load_as_go(release: Release) -> Suite:
        return _load_as(doc, release, pinned=pinned, results=results, context=context,
                        as_go="a task file names a grader kind only it has")

    if not pinned:
        try:
            inferred = infer(load_as, str(doc.path))
        except SpecError as exc:
            # The edition was guessed from the eval file (task files are read later): a grader
            # kind a task file names may be one only the Go edition has.
            if not exc.path.endswith("type"):
                raise
            try:
                inferred = infer(load_as_go, str(doc.path))
            except SpecError:
                raise exc from None
            load_as = load_as_go
        suite, release = inferred.suite, inferred.release
        if inferred.warning is not None:
            suite.warnings.insert(0, inferred.warning)
    else:
        try:
            release = choose(options.waza_version, None if raw_version is None else str(raw_version))
        except ValueError as exc:
            where = "" if options.waza_version is not None else doc.where("waza_version")
            raise SpecError(str(exc), where=where) from None
        suite = load_as(release)
    if options.explain and any(line.startswith("release: ") for line in suite.explain):
        suite.explain += ["other releases (the newest that loads decides):", *alternatives(load_as, release)]
    return suite


def _load_as(doc: YamlDoc, release: Release, *, pinned: bool, results: Path | None,
             context: SpecContext, as_go: str | None = None) -> Suite:
    """The suite read as ``release`` (as the Go edition, for reason ``as_go``, when given);
    SpecError where that release refuses it."""
    warnings: list[str] = []
    results_path = find_results(doc, results, _text(doc.data.get("results")), RESULT_FILES)
    runs, shapes, schema = read_waza_runs(results_path) if results_path else ({}, set(), None)
    edition, _ = edition_of(_kinds(doc.data), shapes, set(doc.data), pinned or as_go is not None)
    more_documents(doc, edition, warnings)
    strict = _Strict(release) if edition == "go" and release.refuses_unknown() else None
    spec = read_model(WazaEvalFile, doc.data, doc, warnings=warnings,
                      unknown=None if strict is None else strict.at(doc))
    if edition == "go":
        check_required_config(doc, doc.data.get("config"), warnings=warnings)
    if strict is not None and release.has("workers") and spec.config is not None and \
            "max_workers" in spec.config.model_fields_set:
        # renamed `workers` in 0.24 (a breaking change, CHANGELOG.md): the old key is now unknown
        strict.at(doc)(("config",), "max_workers", spec.config)
    base = doc.path.parent.resolve()
    if spec.tasks is None and spec.tasks_from is None:
        raise doc.error("a waza eval needs `tasks` (globs of task files) or `tasks_from` (a CSV file)")
    tasks, disabled, task_files = _tasks(doc, spec, base, warnings, strict, edition)
    judge = spec.config.judge_model if spec.config else None
    suite_graders = WazaGraders(doc, edition, release, judge, warnings=warnings, suite_dir=base)
    graders = compile_graders(spec.graders or [], doc, ("graders",), context, prepare=suite_graders.prepare)
    if edition == "go" and release.has("agent_tools"):
        implicit = agent_grader(base, spec.config.skill_directories if spec.config else None, spec.graders or [],
                                warnings)
        graders += compile_graders([implicit] if implicit else [], doc, ("skill",), context)
    grade_expected = edition == "go" and release.has("expected")

    samples, sample_graders, missing = [], {}, []
    trials = spec.config.trials_per_task if spec.config else None
    off_count: list[str] = []
    clusters: dict[str, str] = {}
    replaced: dict[str, set[str]] = {}
    for tdoc, task in tasks:
        entries = [*(task.graders or []), *(_expected_graders(task) if grade_expected else [])]
        task_prepare = WazaGraders(tdoc, edition, release, judge, default_type="code", warnings=warnings,
                                   suite_dir=base).prepare
        task_graders = compile_graders(entries, tdoc, ("graders",), context, prepare=task_prepare)
        if edition == "go":
            checkpoints = checkpoint_specs(tdoc, task.checkpoints, context, task_prepare, warnings, strict is not None)
            task_graders += compile_graders(checkpoints, tdoc, ("checkpoints",), context)
            task_graders, replaced[task.id] = replace_by_name(graders, task_graders)
        inputs = task.inputs or {}
        task_runs = runs.pop(task.id, None)
        if task_runs is not None and trials is not None and len(task_runs) != trials:
            off_count.append(f"{task.id} ({len(task_runs)})")
        if task_runs is None and any(k in inputs for k in _RUN_KEYS):
            task_runs = [(tdoc.where("inputs"), inputs)]
        if not task_runs:
            missing.append(task.id)
            continue
        meta = _task_metadata(tdoc, task, edition)
        prompt = task_prompt(tdoc, inputs, edition == "go" and release.has("task_inputs_027"))
        expected = tdoc.data.get("expected") if isinstance(tdoc.data, Mapping) else None
        for n, (where, run) in enumerate(task_runs, 1):
            sid = task.id if len(task_runs) == 1 else f"{task.id}#{run.get('trial_id', n)}"
            if len(task_runs) > 1:
                clusters[sid] = task.id
            samples.append(make_sample(sid, run, input=prompt, expected=expected, metadata=meta,
                                       base_dir=base, where=where))
            if task_graders:
                sample_graders[sid] = task_graders
    if not samples:
        hint = f"results file {results_path}" if results_path else \
            f"a results file (--results, or {' / '.join(RESULT_FILES)} beside eval.yaml)"
        raise SpecError(f"no graded outputs: none of {len(tasks)} task(s) has a run in {hint} "
                        "or an inputs.output in its task file", where=str(doc.path))
    if off_count:
        warnings.append(f"{doc.where('config', 'trials_per_task')}: config.trials_per_task is {trials}, but "
                        f"{results_path} holds another number of runs for {len(off_count)} task(s): "
                        f"{', '.join(off_count[:5])}{' ...' if len(off_count) > 5 else ''}; each run is graded")
    graders = per_task(graders, samples, sample_graders, replaced)
    unmatched = sorted(set(runs) - disabled)
    if unmatched:
        warnings.append(unmatched_warning(unmatched, results_path, "task"))
    return Suite(
        name=spec.name or base.name, samples=samples, graders=graders, sample_graders=sample_graders,
        threshold=None, cost_ordered=spec.cost_ordered or (spec.config is not None and spec.config.cost_ordered),
        dialect=NAME, source=doc.path, definition=spec,
        inputs=[doc.path, *task_files, *suite_graders.files, *([results_path] if results_path else [])],
        missing=missing, unmatched_results=unmatched, clusters=clusters, warnings=warnings,
        explain=_explain(edition, release, pinned, shapes, schema, results_path, trials, as_go))


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


class _Strict:
    """Unknown keys as waza refuses them from 0.24: ``field x not found in type models.T``."""

    def __init__(self, release: Release) -> None:
        self.release = release

    def at(self, doc: YamlDoc) -> Unknown:
        def refuse(keys: Keys, key: str, node: BaseModel) -> None:
            go_type = getattr(type(node), "go_type", type(node).__name__)
            if go_type == "models.BenchmarkSpec" and self.release.version >= (0, 31, 0):
                go_type = "models.EvalSpec"  # renamed in 0.31 (CHANGELOG.md, #222)
            raise doc.error(f"field {key} not found in type {go_type} (waza {self.release.since_text('strict')} "
                            f"decodes with known fields only; reading as {self.release.name})", *keys, key,
                            kind=ReleaseRefusal)
        return refuse


def _kinds(data: Any) -> set[str]:
    """Grader kinds named in the eval file (task files are read later), ``tool_calls:go`` for a
    Go-shaped ``tool_calls``."""
    out: set[str] = set()
    for g in (data.get("graders") or []) if isinstance(data, Mapping) else []:
        if isinstance(g, Mapping) and isinstance(g.get("type"), str):
            config = g.get("config")
            keys = {*(config if isinstance(config, Mapping) else {}), *g}
            go = g["type"] == "tool_calls" and bool(GO_TOOL_CALLS & keys)
            out.add("tool_calls:go" if go else g["type"])
    return out


def _expected_graders(task: WazaTask) -> list[dict[str, Any]]:
    """waza's expectation results (``evaluateExpectations``), one grader per list given."""
    exp = task.expected
    if not isinstance(exp, WazaExpectation):
        return []
    return [{"type": "waza_expected", "name": f"_{rule}", "config": {"rule": rule, "values": values}}
            for rule, values in (("output_contains", exp.output_contains),
                                 ("output_not_contains", exp.output_not_contains),
                                 ("output_contains_any", exp.output_contains_any)) if values]


def _explain(edition: Edition, release: Release, pinned: bool, shapes: AbstractSet[str], schema: str | None,
             results: Path | None, trials: int | None, as_go: str | None) -> list[str]:
    lines = []
    why = "a release is pinned" if pinned else as_go or ("its results file is the Go edition's" if "go" in shapes else
                                                         "its results file is the Python edition's" if "python" in
                                                         shapes else "from its grader kinds and keys")
    lines.append(f"edition: {'Go' if edition == 'go' else 'Python'} ({why})")
    if edition == "go":
        lines.append(f"release: {release.describe()}")
        lines += [f"  {b.summary} [{release.since_text(b.key)}; {b.source}]" for b in release.holding()]
    if results is not None:
        tells = f"schemaVersion {schema}" if schema else "no schemaVersion"
        lines.append(f"results: {results} ({', '.join(sorted(shapes)) or 'empty'}; {tells})")
    if trials is not None:
        lines.append(f"trials_per_task: {trials}: each task's runs in the results file are samples <id>#<n> of "
                     "one cluster (pass@k, pass^k, clustered intervals); not --repeats, which re-grades one output")
    return lines


def _task_metadata(tdoc: YamlDoc, task: WazaTask, edition: Edition) -> dict[str, Any]:
    inputs = task.inputs or {}
    meta = {"task": task.id, "task_name": task.name, "description": task.description,
            "tags": task.tags or [], "source": str(tdoc.path)}
    meta.update({k: v for k, v in inputs.items() if k not in ("prompt", *_RUN_KEYS)})
    if edition == "python":
        meta[TASK_KEY] = python_task_dump(tdoc.data if isinstance(tdoc.data, Mapping) else {"id": task.id})
    return {k: v for k, v in meta.items() if v is not None}


def _tasks(doc: YamlDoc, spec: WazaEvalFile, base: Path, warnings: list[str],
           strict: _Strict | None, edition: Edition) -> tuple[list[_Task], set[str], list[Path]]:
    """The enabled tasks, the ids of disabled ones, and the files they were read from. As in
    waza's runner (``loadTestCasesFromFiles``), only globs that together match nothing fail;
    a pattern matching nothing beside others that match is a warning."""
    if spec.tasks is None:
        return csv_tasks(doc, spec.tasks_from or "", spec.range, spec.inputs or {}, base), set(), []
    files: list[Path] = []
    empty = []
    for i, pattern in enumerate(spec.tasks):
        found = sorted(Path(p) for p in glob.glob(str(base / pattern), recursive=True))
        if not found:
            empty.append(i)
        files.extend(f for f in found if f not in files)
    if not files:
        raise doc.error(f"no test files matched patterns: {spec.tasks} in directory: {base}", "tasks")
    warnings += [f"{doc.where('tasks', i)}: tasks[{i}]: no task files match {spec.tasks[i]!r}" for i in empty]
    out: list[_Task] = []
    disabled: set[str] = set()
    seen: dict[str, str] = {}
    for f in files:
        tdoc = YamlDoc(f, first_only=True)
        more_documents(tdoc, edition, warnings)
        if not isinstance(tdoc.data, Mapping):
            raise tdoc.error("a task file must be a mapping")
        task = read_model(WazaTask, tdoc.data, tdoc, warnings=warnings,
                          unknown=None if strict is None else strict.at(tdoc))
        for key, model in (("inputs", WazaInputs), ("expected", WazaExpectation)):
            if isinstance(tdoc.data.get(key), Mapping):
                part = read_model(model, tdoc.data[key], tdoc, key, warnings=warnings,
                                  unknown=None if strict is None else strict.at(tdoc))
                if key == "expected":
                    task.expected = part
        if task.id in seen:
            raise tdoc.error(f"task id {task.id!r} is also used in {seen[task.id]}", "id")
        seen[task.id] = tdoc.where("id")
        if task.enabled is False:
            disabled.add(task.id)
            continue
        out.append((tdoc, task))
    return out, disabled, files
