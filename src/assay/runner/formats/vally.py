"""Vally eval specs: ``stimuli`` (each with ``name``, ``prompt`` and its own ``graders``) and
``scoring`` (``weights`` keyed by grader name or type, and ``threshold``).

assay grades runs; it does not execute agents. A stimulus's trajectory comes from, in order:

1. a trajectories file: ``data["results"]`` (the CLI's ``--results``), else
   ``trajectories.jsonl``, ``trajectories.json`` or a ``trajectories/`` directory of JSON files
   beside the eval file. Each record is a Vally trajectory (``stimulus``, ``events``,
   ``output``, ``workDir``, ``metadata``), or a record wrapping one under ``trajectory``;
   it is matched to its stimulus by ``stimulus.name`` (or ``stimulus``, ``stimulusName``,
   ``name``). Several trajectories for one stimulus become samples ``<name>#<n>``;
2. else ``output`` / ``events`` / ``trajectory`` written on the stimulus itself.

Every grader is stimulus-level (``sample_graders``). A weight written on a grader wins; else
``scoring.weights`` by grader name, then by type; else 1. With ``scoring.threshold`` a sample
passes when its weighted score reaches it; without, every grader must pass (Vally's binary
verdict). Vally's ``output-contains`` (``substring``) runs as ``regex``; other types keep
their names and must be registered in assay.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from assay.core.context import SpecContext
from assay.core.errors import SpecError
from assay.core.spec import MAX_WEIGHT, Fraction, Weight
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

_WEIGHT: TypeAdapter[float] = TypeAdapter(Weight)
_FRACTION: TypeAdapter[float | None] = TypeAdapter(Fraction | None)

FORMAT = "vally"
TOP_KEYS = ("name", "description", "version", "type", "environment", "config", "stimuli", "scoring",
            "results", "cost_ordered")
STIMULUS_KEYS = ("name", "prompt", "description", "graders", "constraints", "environment", "tags",
                 "expected", "output", "events", "trajectory", "workDir", "workspace", "metadata")
RESULT_FILES = ("trajectories.jsonl", "trajectories.json", "trajectories")
_INLINE = ("output", "events", "trajectory")
_REGEX_SPECIAL = re.compile(r"([\\.^$*+?()\[\]{}|/])")


def detect(path: Path, data: Any) -> bool:
    """A Vally eval spec: a mapping with a ``stimuli`` list."""
    return isinstance(data, Mapping) and isinstance(data.get("stimuli"), list)


def load(path: Path, data: Any, context: SpecContext) -> LoadedSuite:
    """Load a Vally eval spec. Raises SpecError naming file, line and field for invalid input."""
    doc, data, base = open_suite(path, data, "Vally eval spec")
    context = context.at(base)
    for key in data:
        if key not in TOP_KEYS:
            raise doc.error(f"unknown field {key!r} (known: {', '.join(TOP_KEYS)})", key)
    weights, threshold = _scoring(doc, data.get("scoring"))
    stimuli = data["stimuli"]
    if not stimuli:
        raise doc.error("stimuli must hold at least one stimulus", "stimuli")

    results_path = resolve_results(data.get("results"), base, RESULT_FILES)
    runs = _runs_by_stimulus(results_path) if results_path else {}
    used_weights: set[str] = set()
    samples, sample_graders, missing, seen = [], {}, [], set()
    for i, stim in enumerate(stimuli):
        at = ("stimuli", i)
        if not isinstance(stim, Mapping):
            raise doc.error("a stimulus must be a mapping", *at)
        for key in stim:
            if key not in STIMULUS_KEYS:
                raise doc.error(f"unknown field {key!r} (known: {', '.join(STIMULUS_KEYS)})", *at, key)
        name = stim.get("name")
        if not isinstance(name, str) or not name:
            raise doc.error("a stimulus needs a name", *at)
        if name in seen:
            raise doc.error(f"two stimuli are named {name!r}", *at, "name")
        seen.add(name)
        specs = _graders(doc, stim.get("graders"), (*at, "graders"), context, weights, used_weights)
        stim_runs = runs.pop(name, None)
        if stim_runs is None and any(k in stim for k in _INLINE):
            inline = stim["trajectory"] if isinstance(stim.get("trajectory"), Mapping) else {}
            stim_runs = [(doc.where(*at), {**stim, **inline})]
        if not stim_runs:
            missing.append(name)
            continue
        meta = {k: stim[k] for k in ("description", "tags", "constraints") if stim.get(k) is not None}
        meta["stimulus"] = name
        for n, (where, run) in enumerate(stim_runs, 1):
            sid = name if len(stim_runs) == 1 else f"{name}#{n}"
            samples.append(make_sample(sid, run, input=stim.get("prompt"), expected=stim.get("expected"),
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
        raise SpecError(f"no graded outputs: none of {len(stimuli)} stimuli has a trajectory in {hint} "
                        "or an output on the stimulus", where=str(doc.path))
    return LoadedSuite(
        name=str(data.get("name") or base.name), samples=samples, graders=[], sample_graders=sample_graders,
        threshold=threshold, cost_ordered=bool(data.get("cost_ordered")), source=doc.path, format=FORMAT,
        metadata={"description": data.get("description"), "version": data.get("version"),
                  "type": data.get("type"), "config": data.get("config") or {},
                  "scoring": {"weights": weights, "threshold": threshold},
                  "results": str(results_path) if results_path else None, "missing": missing,
                  "unmatched_results": sorted(runs)},
    )


def _scoring(doc: YamlDoc, raw: Any) -> tuple[dict[str, float], float | None]:
    if raw is None:
        return {}, None
    if not isinstance(raw, Mapping):
        raise doc.error("scoring must be a mapping", "scoring")
    for key in raw:
        if key not in ("weights", "threshold"):
            raise doc.error(f"unknown field {key!r} (known: weights, threshold)", "scoring", key)
    weights = raw.get("weights") or {}
    if not isinstance(weights, Mapping):
        raise doc.error("weights must map grader names to numbers", "scoring", "weights")
    for key, w in weights.items():
        try:
            _WEIGHT.validate_python(w)
        except ValidationError:
            raise doc.error(f"weight of {key!r} must be a number from 0 to {MAX_WEIGHT:g}, got {w!r}",
                            "scoring", "weights", key) from None
    threshold = raw.get("threshold")
    try:
        _FRACTION.validate_python(threshold)
    except ValidationError:
        if threshold is not None:
            raise doc.error(f"threshold must be a number between 0 and 1, got {threshold!r}",
                            "scoring", "threshold") from None
    return {str(k): float(v) for k, v in weights.items()}, None if threshold is None else float(threshold)


def _graders(doc: YamlDoc, raw: Any, keys: tuple[str | int, ...], context: SpecContext, weights: dict[str, float],
             used: set[str]) -> list:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise doc.error("graders must be a list", *keys)
    out, names = [], set()
    for j, entry in enumerate(raw):
        at = (*keys, j)
        spec = fold_grader(entry, doc, at)
        vtype, name = spec.get("type"), spec.get("name") or spec.get("type")
        if "weight" not in spec and isinstance(vtype, str):
            key = name if name in weights else vtype if vtype in weights else None
            if key is not None:
                spec["weight"] = weights[key]
        used.update(k for k in (name, vtype) if k in weights)
        spec = _translate(spec, doc, at)
        spec.setdefault("name", name)
        compiled = compile_grader(spec, doc, at, context)
        if compiled.name in names:
            raise doc.error(f"two graders of this stimulus are named {compiled.name!r}; "
                            "give each a distinct name", *at)
        names.add(compiled.name)
        out.append(compiled)
    return out


def _translate(spec: dict[str, Any], doc: YamlDoc, at: tuple[str | int, ...]) -> dict[str, Any]:
    """Vally grader types assay spells differently."""
    if spec.get("type") == "output-contains":
        config = dict(spec["config"])
        substring = config.pop("substring", None)
        if not isinstance(substring, str):
            raise doc.error("output-contains needs config.substring (text)", *at, "config")
        if config:
            raise doc.error(f"unknown field(s) for output-contains: {', '.join(config)}", *at, "config")
        return {**spec, "type": "regex", "config": {"pattern": _REGEX_SPECIAL.sub(r"\\\1", substring)}}
    return spec


def _runs_by_stimulus(path: Path) -> dict[str, list[tuple[str, Mapping[str, Any]]]]:
    runs: dict[str, list[tuple[str, Mapping[str, Any]]]] = {}
    for where, rec in read_records(path):
        if isinstance(rec.get("trajectory"), Mapping):
            rec = {**rec, **rec["trajectory"]}
        stim = rec.get("stimulus")
        name = stim.get("name") if isinstance(stim, Mapping) else stim
        name = name or rec.get("stimulusName") or rec.get("stimulus_name") or rec.get("name")
        if not isinstance(name, str):
            raise SpecError("a trajectory needs stimulus.name naming its stimulus", where=where)
        runs.setdefault(name, []).append((where, rec))
    return runs
