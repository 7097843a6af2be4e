"""Vally eval specs: ``stimuli`` (each with ``name``, ``prompt`` and its own ``graders``) and
``scoring`` (``weights`` keyed by grader name or type, and ``threshold``).

assay grades runs; it does not execute agents. A stimulus's trajectories come from, in order:

1. a Vally run: ``--results`` (a file, a run directory or an output directory of timestamped
   runs), else the file's ``results`` key, else the first of ``_vally_runs.SIBLINGS`` beside
   the eval file holding one. Every trajectory in it, flat or inside a trial result, is matched
   to its stimulus by ``stimulus.name``; several (trials) become samples ``<name>#<n>``, in
   trial order (``_vally_runs``);
2. else ``output`` / ``events`` / ``trajectory`` written on the stimulus itself.

Every grader is stimulus-level (``sample_graders``): ``defaults.graders`` first, then the
stimulus's own. An unnamed grader is named after its type, ``<type>#2``, ``#3``, ... when the
type repeats in a stimulus. Top-level ``tags`` and ``defaults`` (tags, constraints, environment,
rubric) fill in what a stimulus leaves out, key by key for mappings (``_effective``). A weight
written on a grader wins; else ``scoring.weights`` by grader name, then by type (shared by every
grader of that type); else 1. With ``scoring.threshold`` a sample passes when its weighted
score reaches it; without, every grader must pass (Vally's binary verdict). Vally's catalogue
types run as assay's ``vally_*`` graders (``_vally_catalogue``); other types keep their names
and must be registered in assay.

Unknown keys at the top level, in a stimulus, ``scoring``, ``defaults`` or a grader entry are
ignored with a warning naming file and line: Vally's lint checks none of them
(microsoft.github.io/vally/reference/cli/lint/), so specs that pass ``vally lint --strict`` may
hold them. Unknown keys inside a grader's ``config`` stay errors, as in Vally
(``invalid-grader-config``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import ConfigDict, Field

from assay.core.context import SpecContext
from assay.core.errors import SpecError, format_loc
from assay.core.spec import CompiledSpec, Fraction, Weight
from assay.runner.suites.dialects import _vally_catalogue as catalogue
from assay.runner.suites.dialects import detect_vally
from assay.runner.suites.dialects._vally_runs import SIBLINGS, discover, locate, read_runs, with_event_summary
from assay.runner.suites.filemodel import FileModel, Keys, Text, read_model
from assay.runner.suites.graders import compile_graders
from assay.runner.suites.runs import Runs, find_results, make_sample, unmatched_warning
from assay.runner.suites.suite import DialectOptions, Suite
from assay.runner.yamlsrc import YamlDoc

NAME = "vally"
_INLINE = ("output", "events", "trajectory")
_LENIENT = ConfigDict(extra="allow")


class Stimulus(FileModel):
    """One stimulus: a prompt, its graders, and optionally its trajectory written inline."""

    model_config = _LENIENT

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

    model_config = _LENIENT

    weights: dict[str, Weight] | None = Field(default=None, description="Weights by grader name, else type.")
    threshold: Fraction | None = Field(default=None, description="Minimum weighted score to pass.")


class VallyDefaults(FileModel):
    """What every stimulus inherits: graders added before its own; the rest where it sets none.
    Not on Vally's eval-spec page: these merge rules are chosen here (docs/concepts/formats.md)."""

    model_config = _LENIENT

    graders: list[Any] | None = None
    rubric: list[str] | str | None = None
    constraints: Any = None
    environment: Any = None
    tags: Any = None
    model: Any = Field(default=None, description="The agent's model (an experiment varies /defaults/model); "
                                                 "assay runs no agent, so it is kept, unused.")


class VallyEvalFile(FileModel):
    """A Vally eval spec. ``results`` and ``cost_ordered`` are assay extensions."""

    model_config = _LENIENT

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
    results: Text | None = Field(default=None, description="The Vally run (file or directory) to grade.")
    cost_ordered: bool = False


detect = detect_vally


def load(doc: YamlDoc, *, results: Path | None, context: SpecContext,
         options: DialectOptions | None = None) -> Suite:
    """Load a Vally eval spec. Raises SpecError naming file, line and field for invalid input."""
    warnings: list[str] = []
    spec = read_model(VallyEvalFile, doc.data, doc, warnings=warnings)
    base = doc.path.parent.resolve()
    scoring = spec.scoring or VallyScoring()
    weights = scoring.weights or {}
    results_path = find_results(doc, results, spec.results, ()) or discover(base)
    run_files = locate(results_path, warnings) if results_path else []
    runs: Runs = read_runs(run_files)
    used_weights: set[str] = set()
    defaults = spec.defaults or VallyDefaults()
    samples, sample_graders, missing, seen = [], {}, [], set()
    clusters: dict[str, str] = {}
    for i, stim in enumerate(spec.stimuli):
        at = ("stimuli", i)
        if stim.name in seen:
            raise doc.error(f"two stimuli are named {stim.name!r}", *at, "name")
        seen.add(stim.name)
        eff = _effective(stim, defaults, spec.tags)
        specs = _stimulus_graders(doc, context, (weights, used_weights), defaults.graders or [],
                                  stim.graders or [], at, eff.get("rubric"), warnings)
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
            if len(stim_runs) > 1:
                clusters[sid] = stim.name
            samples.append(make_sample(sid, run, input=stim.prompt, expected=stim.expected,
                                       metadata=dict(meta), base_dir=base, where=where))
            if specs:
                sample_graders[sid] = specs
    unused = sorted(set(weights) - used_weights)
    if unused:
        raise doc.error(f"scoring weight {unused[0]!r} names no grader in any stimulus",
                        "scoring", "weights", unused[0])
    if not samples:
        hint = f"the Vally run {results_path}" if results_path else \
            f"a Vally run (--results, or {' / '.join(SIBLINGS)} beside the eval file)"
        raise SpecError(f"no graded outputs: none of {len(spec.stimuli)} stimuli has a trajectory in {hint} "
                        "or an output on the stimulus", where=str(doc.path))
    unmatched = sorted(runs)
    if unmatched:
        warnings.append(unmatched_warning(unmatched, results_path, "stimulus"))
    return Suite(
        name=spec.name or base.name, samples=samples, graders=[], sample_graders=sample_graders,
        threshold=scoring.threshold, cost_ordered=spec.cost_ordered, dialect=NAME, source=doc.path,
        definition=spec, inputs=[doc.path, *([results_path] if results_path else []),
                                 *(f for f in run_files if f != results_path)],
        missing=missing, unmatched_results=unmatched, clusters=clusters, warnings=warnings)


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


def _stimulus_graders(doc: YamlDoc, context: SpecContext, weighing: tuple[dict[str, float], set[str]],
                      inherited: list[Any], own: list[Any], at: Keys, rubric: Any,
                      warnings: list[str]) -> list[CompiledSpec]:
    """``defaults.graders`` then the stimulus's own, compiled where each is written. Unnamed
    graders take their type as name, numbered ``#2``, ``#3``, ... past names already taken in
    the stimulus; two graders given one name are still an error. ``weighing`` is
    ``scoring.weights`` and the set recording which of them were used."""
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

    def prepare(entry: Any, where: Keys) -> dict[str, Any]:
        spec = catalogue.entry_spec(doc, entry, where, warnings)
        return catalogue.with_rubric(_named_and_weighted(doc, spec, where, weighing, auto.get(where)), rubric)

    specs: list[CompiledSpec] = []
    first: dict[str, Keys] = {}  # grader name -> where it is first written
    for where, entries in lists:
        for j, compiled in enumerate(compile_graders(entries, doc, where, context, prepare=prepare)):
            if compiled.name in first:
                raise doc.error(f"duplicate grader name {compiled.name!r} (also {format_loc(first[compiled.name])}); "
                                "give each grader a distinct `name`", *where, j, "name")
            first[compiled.name] = (*where, j)
            specs.append(compiled)
    return specs


def _named_and_weighted(doc: YamlDoc, spec: dict[str, Any], at: Keys,
                        weighing: tuple[dict[str, float], set[str]], auto: str | None) -> dict[str, Any]:
    """A Vally grader spec with its name (``auto`` for an unnamed one), its weight from
    ``scoring.weights`` by name, else by type (recording which weights were used), and Vally's
    type name translated to assay's grader."""
    weights, used = weighing
    vtype = spec.get("type") if isinstance(spec.get("type"), str) else None
    name = (spec.get("name") if isinstance(spec.get("name"), str) else None) or auto or vtype
    if "weight" not in spec and vtype is not None:
        key = name if name in weights else vtype if vtype in weights else None
        if key is not None:
            spec["weight"] = weights[key]
    used.update(k for k in (name, vtype) if k in weights)
    spec = catalogue.translate(spec, doc, at)
    if not spec.get("name"):
        spec["name"] = name
    return spec
