"""Vally eval specs: ``stimuli`` (each with ``name``, ``prompt`` and its own ``graders``) and
``scoring`` (``weights`` keyed by grader name or type, and ``threshold``).

assay grades runs; it does not execute agents. A stimulus's trajectory comes from, in order:

1. a trajectories file: ``--results``, else the file's ``results`` key, else
   ``trajectories.jsonl``, ``trajectories.json`` or a ``trajectories/`` directory of JSON files
   beside the eval file. Each record is a Vally trajectory (``stimulus``, ``events``,
   ``output``, ``workDir``, ``metadata``), or a record wrapping one under ``trajectory``;
   it is matched to its stimulus by ``stimulus.name`` (or ``stimulus``, ``stimulusName``,
   ``name``). Several trajectories for one stimulus become samples ``<name>#<n>``;
2. else ``output`` / ``events`` / ``trajectory`` written on the stimulus itself.

Every grader is stimulus-level (``sample_graders``): ``defaults.graders`` first, then the
stimulus's own. An unnamed grader is named after its type, ``<type>#2``, ``#3``, ... when the
type repeats in a stimulus. Top-level ``tags`` and ``defaults`` (tags, constraints, environment,
rubric) fill in what a stimulus leaves out, key by key for mappings (``_effective``). A weight
written on a grader wins; else ``scoring.weights`` by grader name, then by type (shared by every
grader of that type); else 1. With ``scoring.threshold`` a sample passes when its weighted
score reaches it; without, every grader must pass (Vally's binary verdict). Vally's catalogue
types (``_CATALOGUE``: output-*, file-*, completed, exit-success, metric thresholds, run-command,
skill-invocation, tool-calls) run as assay's ``vally_*`` graders; other types keep their names
and must be registered in assay. Unknown keys are errors.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from pathlib import Path
from typing import Any

from pydantic import Field

from assay.core.context import SpecContext
from assay.core.errors import SpecError, format_loc
from assay.core.spec import Fraction, Weight
from assay.runner.suites.filemodel import FileModel, Keys, Text, read_model
from assay.runner.suites.graders import compile_graders, fold_grader
from assay.runner.suites.runs import Runs, find_results, make_sample, read_records, unmatched_warning
from assay.runner.suites.suite import Suite
from assay.runner.yamlsrc import YamlDoc

NAME = "vally"
RESULT_FILES = ("trajectories.jsonl", "trajectories.json", "trajectories")
_INLINE = ("output", "events", "trajectory")


class Stimulus(FileModel):
    """One stimulus: a prompt, its graders, and optionally its trajectory written inline."""

    name: str = Field(min_length=1, description="The sample id.")
    prompt: Any = None
    description: Any = None
    rubric: list[str] | str | None = Field(default=None, description="Criteria for the judge graders "
                                                                     "(prompt, panel, pairwise) without a prompt.")
    graders: list[Any] | None = None
    constraints: Any = None
    environment: Any = None
    tags: Any = None
    expected: Any = None
    output: Any = None
    events: Any = None
    trajectory: Any = None
    workDir: Any = None  # Vally's spelling
    workspace: Any = None
    metadata: Any = None


class VallyScoring(FileModel):
    """How a stimulus's grader results combine."""

    weights: dict[str, Weight] | None = Field(default=None, description="Weights by grader name, else type.")
    threshold: Fraction | None = Field(default=None, description="Minimum weighted score to pass.")


class VallyDefaults(FileModel):
    """What every stimulus inherits: graders added before its own; the rest where it sets none."""

    graders: list[Any] | None = None
    rubric: list[str] | str | None = None
    constraints: Any = None
    environment: Any = None
    tags: Any = None


class VallyFile(FileModel):
    """A Vally eval spec. ``results`` and ``cost_ordered`` are assay extensions."""

    name: Text | None = Field(default=None, description="Suite name (default: the folder's name).")
    description: Text | None = None
    version: Any = None
    type: Any = None
    environment: Any = None
    config: Any = None
    tags: Any = Field(default=None, description="Tags every stimulus inherits (its own win per key).")
    defaults: VallyDefaults | None = None
    stimuli: list[Stimulus] = Field(min_length=1)
    scoring: VallyScoring | None = None
    results: Text | None = Field(default=None, description="The trajectories file to grade.")
    cost_ordered: bool = False


def detect(data: Mapping[str, Any]) -> bool:
    """A Vally eval spec: a ``stimuli`` list."""
    return isinstance(data.get("stimuli"), list)


def load(doc: YamlDoc, *, results: Path | None, context: SpecContext) -> Suite:
    """Load a Vally eval spec. Raises SpecError naming file, line and field for invalid input."""
    warnings: list[str] = []
    spec = read_model(VallyFile, doc.data, doc, warnings=warnings)
    base = doc.path.parent.resolve()
    scoring = spec.scoring or VallyScoring()
    weights = scoring.weights or {}
    results_path = find_results(doc, results, spec.results, RESULT_FILES)
    runs = _runs_by_stimulus(results_path) if results_path else {}
    used_weights: set[str] = set()
    defaults = spec.defaults or VallyDefaults()
    samples, sample_graders, missing, seen = [], {}, [], set()
    for i, stim in enumerate(spec.stimuli):
        at = ("stimuli", i)
        if stim.name in seen:
            raise doc.error(f"two stimuli are named {stim.name!r}", *at, "name")
        seen.add(stim.name)
        eff = _effective(stim, defaults, spec.tags)
        specs = _stimulus_graders(doc, context, weights, used_weights, defaults.graders or [],
                                  stim.graders or [], at, eff.get("rubric"))
        stim_runs = runs.pop(stim.name, None)
        if stim_runs is None and any(k in stim.model_fields_set for k in _INLINE):
            inline = stim.trajectory if isinstance(stim.trajectory, Mapping) else {}
            stim_runs = [(doc.where(*at), with_event_summary({**stim.model_dump(exclude_unset=True), **inline}))]
        if not stim_runs:
            missing.append(stim.name)
            continue
        meta = {k: v for k, v in (("description", stim.description), *eff.items()) if v is not None and k != "rubric"}
        meta["stimulus"] = stim.name
        for n, (where, run) in enumerate(stim_runs, 1):
            sid = stim.name if len(stim_runs) == 1 else f"{stim.name}#{n}"
            samples.append(make_sample(sid, run, input=stim.prompt, expected=stim.expected,
                                       metadata=dict(meta), base_dir=base, where=where))
            if specs:
                sample_graders[sid] = specs
    unused = sorted(set(weights) - used_weights)
    if unused:
        raise doc.error(f"scoring weight {unused[0]!r} names no grader in any stimulus",
                        "scoring", "weights", unused[0])
    if not samples:
        hint = f"trajectories file {results_path}" if results_path else \
            f"a trajectories file (--results, or {' / '.join(RESULT_FILES)} beside the eval file)"
        raise SpecError(f"no graded outputs: none of {len(spec.stimuli)} stimuli has a trajectory in {hint} "
                        "or an output on the stimulus", where=str(doc.path))
    unmatched = sorted(runs)
    if unmatched:
        warnings.append(unmatched_warning(unmatched, results_path, "stimulus"))
    return Suite(
        name=spec.name or base.name, samples=samples, graders=[], sample_graders=sample_graders,
        threshold=scoring.threshold, cost_ordered=spec.cost_ordered, dialect=NAME, source=doc.path,
        definition=spec, inputs=[doc.path, *([results_path] if results_path else [])],
        missing=missing, unmatched_results=unmatched, warnings=warnings)


def _effective(stim: Stimulus, defaults: VallyDefaults, tags: Any) -> dict[str, Any]:
    """The stimulus's rubric, tags, constraints and environment with what it leaves out taken
    from ``defaults`` (and top-level ``tags``); mappings merge key by key, the stimulus winning
    (microsoft.github.io/vally/guides/authoring-eval-suites/, "Eval-level tags")."""
    out: dict[str, Any] = {}
    for key in ("rubric", "tags", "constraints", "environment"):
        for layer in [*([tags] if key == "tags" else []), getattr(defaults, key), getattr(stim, key)]:
            if layer is not None:
                old = out.get(key)
                out[key] = {**old, **layer} if isinstance(old, Mapping) and isinstance(layer, Mapping) else layer
    return out


def _stimulus_graders(doc: YamlDoc, context: SpecContext, weights: dict[str, float], used: set[str],
                      inherited: list[Any], own: list[Any], at: Keys, rubric: Any) -> list[Any]:
    """``defaults.graders`` then the stimulus's own, compiled where each is written. Unnamed
    graders take their type as name, numbered ``#2``, ``#3``, ... past names already taken in
    the stimulus; two graders given one name are still an error."""
    lists: list[tuple[Keys, list[Any]]] = [(("defaults", "graders"), inherited), ((*at, "graders"), own)]
    taken = {e["name"] for _, entries in lists for e in entries
             if isinstance(e, Mapping) and isinstance(e.get("name"), str) and e["name"]}
    auto: dict[Keys, str] = {}
    for where, entries in lists:
        for j, e in enumerate(entries):
            if isinstance(e, Mapping) and not e.get("name") and isinstance(e.get("type"), str):
                n = 1
                while (name := e["type"] if n == 1 else f"{e['type']}#{n}") in taken:
                    n += 1
                taken.add(name)
                auto[(*where, j)] = name
    prepare = partial(_with_rubric, partial(_prepare, doc, weights, used, auto), rubric)
    specs, first = [], {}
    for where, entries in lists:
        for j, compiled in enumerate(compile_graders(entries, doc, where, context, prepare=prepare)):
            if compiled.name in first:
                raise doc.error(f"duplicate grader name {compiled.name!r} (also {format_loc(first[compiled.name])}); "
                                "give each grader a distinct `name`", *where, j, "name")
            first[compiled.name] = (*where, j)
            specs.append(compiled)
    return specs


def _prepare(doc: YamlDoc, weights: dict[str, float], used: set[str], auto: dict[Keys, str],
             entry: Any, at: Keys) -> dict[str, Any]:
    """A Vally grader entry as an assay spec: its name (``auto`` for an unnamed one), its weight
    from ``scoring.weights`` (recording which weights were used) and Vally's type names translated."""
    spec = fold_grader(doc, entry, at)
    vtype = spec.get("type") if isinstance(spec.get("type"), str) else None
    name = (spec.get("name") if isinstance(spec.get("name"), str) else None) or auto.get(at) or vtype
    if "weight" not in spec and vtype is not None:
        key = name if name in weights else vtype if vtype in weights else None
        if key is not None:
            spec["weight"] = weights[key]
    used.update(k for k in (name, vtype) if k in weights)
    spec = _translate(spec, doc, at)
    if not spec.get("name"):
        spec["name"] = name
    return spec


_JUDGES = ("prompt", "panel", "pairwise")


def _with_rubric(prepare: Any, rubric: list[str] | str | None, entry: Any, at: Keys) -> dict[str, Any]:
    """Vally's judge graders (prompt, panel, pairwise: microsoft.github.io/vally/reference/graders/
    prompt/, panel/ and pairwise/) judge by the stimulus's ``rubric`` list when their config has
    no ``prompt``; assay's graders read it from ``config.prompt``, so it is copied there. Their
    other options keep Vally's names (``scoring: scale_1_5``, ``threshold``, ``models``,
    ``aggregation``), which the graders accept as written."""
    spec = prepare(entry, at)
    if rubric and spec.get("type") in _JUDGES and isinstance(spec.get("config"), dict) \
            and "prompt" not in spec["config"]:
        text = rubric if isinstance(rubric, str) else "\n".join(f"- {item}" for item in rubric)
        spec["config"] = {**spec["config"], "prompt": text}
    return spec


# Vally type -> (assay grader, config fields it adds; a negated spelling flips ``negate``).
_CATALOGUE: dict[str, tuple[str, dict[str, Any]]] = {
    "output-contains": ("vally_output", {"mode": "contains"}),
    "output-not-contains": ("vally_output", {"mode": "contains", "negate": True}),
    "output-matches": ("vally_output", {"mode": "matches"}),
    "output-not-matches": ("vally_output", {"mode": "matches", "negate": True}),
    "file-exists": ("vally_file", {"mode": "exists"}),
    "file-not-exists": ("vally_file", {"mode": "exists", "negate": True}),
    "file-contains": ("vally_file", {"mode": "contains"}),
    "file-not-contains": ("vally_file", {"mode": "contains", "negate": True}),
    "file-matches": ("vally_file", {"mode": "matches"}),
    "file-not-matches": ("vally_file", {"mode": "matches", "negate": True}),
    "completed": ("vally_session", {"mode": "completed"}),
    "exit-success": ("vally_session", {"mode": "exit-success"}),
    "run-command": ("vally_run_command", {}),
    "skill-invocation": ("vally_skill_invocation", {}),
    "tool-calls": ("vally_tool_calls", {}),
    **{m: ("vally_metric", {"metric": m}) for m in ("token-budget", "tool-call-count", "turn-count",
                                                    "error-count", "wall-time")},
}


def _translate(spec: dict[str, Any], doc: YamlDoc, at: Keys) -> dict[str, Any]:
    """Vally grader types assay spells differently (``_CATALOGUE``): the type becomes assay's
    grader and the config gains its ``mode``; a ``*-not-*`` spelling inverts ``negate``."""
    entry = _CATALOGUE.get(spec.get("type"))  # type: ignore[arg-type]
    if entry is None:
        return spec
    grader, added = entry
    config = dict(spec["config"])
    for key in added.keys() & config.keys() - {"negate"}:
        raise doc.error(f"unknown field for {spec['type']}: {key}", *at, "config", key)
    if added.get("negate"):
        given = config.get("negate", False)
        config["negate"] = (not given) if isinstance(given, bool) else given  # not a boolean: the grader says so
    return {**spec, "type": grader, "config": {**{k: v for k, v in added.items() if k != "negate"}, **config}}


def _runs_by_stimulus(path: Path) -> Runs:
    runs: Runs = {}
    for where, rec in read_records(path):
        if isinstance(rec.get("trajectory"), Mapping):
            rec = {**rec, **rec["trajectory"]}
        stim = rec.get("stimulus")
        name = stim.get("name") if isinstance(stim, Mapping) else stim
        name = name or rec.get("stimulusName") or rec.get("stimulus_name") or rec.get("name")
        if not isinstance(name, str):
            raise SpecError("a trajectory needs stimulus.name naming its stimulus", where=where)
        runs.setdefault(name, []).append((where, with_event_summary(rec)))
    return runs


def with_event_summary(rec: Mapping[str, Any]) -> dict[str, Any]:
    """The run with what assay's transcript does not keep from Vally's events and record added to
    its ``metadata``: ``turns`` (``turn_end`` events, when the events are Vally's ``{type, data}``
    shape or carry turn markers), ``tool_steps`` (each tool call's turn), ``skills`` (names from
    ``skill_activation`` events) and the trajectory's ``metrics``. The completed, turn-count,
    token-budget, tool-calls and skill-invocation graders read them
    (microsoft.github.io/vally/reference/trajectory-format/)."""
    events = rec.get("events")
    extra: dict[str, Any] = {}
    if isinstance(events, list):
        dicts = [e for e in events if isinstance(e, Mapping)]
        kinds = [e.get("type") for e in dicts]
        if "turn_end" in kinds or "turn_start" in kinds or any(isinstance(e.get("data"), Mapping) for e in dicts):
            extra["turns"] = kinds.count("turn_end")
        if "turn_start" in kinds or "turn_end" in kinds:  # each tool call's 0-based turn, for at_step
            starts = "turn_start" in kinds
            seen, steps = 0, []
            for kind in kinds:
                if kind == ("turn_start" if starts else "turn_end"):
                    seen += 1
                elif kind == "tool_call":
                    steps.append(max(seen - 1, 0) if starts else seen)
            extra["tool_steps"] = steps
        skills = []
        for e in dicts:
            if e.get("type") == "skill_activation":
                data = e.get("data") if isinstance(e.get("data"), Mapping) else e
                name = next((data[k] for k in ("skillName", "skill", "name") if isinstance(data.get(k), str)), None)
                if name is not None:
                    skills.append(name)
        extra["skills"] = skills
    if isinstance(rec.get("metrics"), Mapping):
        extra["metrics"] = dict(rec["metrics"])
    if not extra:
        return dict(rec)
    meta = rec.get("metadata") if isinstance(rec.get("metadata"), Mapping) else {}
    return {**rec, "metadata": {**extra, **meta}}
