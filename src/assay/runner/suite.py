"""Suite files. assay's own format::

    name: presets
    dataset: data.jsonl        # JSONL, CSV or JSON, relative to this file (or `samples:` inline)
    threshold: 0.8             # optional: minimum weighted score per sample
    cost_ordered: false        # optional: skip expensive graders once a cheap one failed
    graders:
      - {type: exact_match, name: exact, weight: 2}

waza (`tasks:`) and Vally (`stimuli:`) files are recognised and loaded by runner/formats.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from assay.core.context import SpecContext
from assay.core.errors import SpecError, format_loc
from assay.core.spec import CompiledSpec, Fraction, compile_spec
from assay.runner.dataset import load_dataset, samples_from_rows
from assay.runner.model import LoadedSuite
from assay.runner.yamlsrc import YamlDoc


class SuiteFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="Suite name, used in reports.")
    description: str | None = None
    dataset: str | None = Field(default=None, description="Path to a JSONL, CSV, TSV or JSON dataset.")
    delimiter: Literal[",", ";", "\t", "tab", "|"] | None = Field(
        default=None, description="Cell separator of a CSV dataset (default `,`; tab for .tsv).")
    samples: list[dict[str, Any]] | None = Field(default=None, description="Inline samples.")
    graders: list[dict[str, Any]] = Field(min_length=1, description="Grader specs applied to every sample.")
    threshold: Fraction | None = Field(default=None, description="Minimum weighted score for a sample to pass.")
    cost_ordered: bool = Field(default=False, strict=True)


def load_suite(path: Path, *, results: Path | None = None, context: SpecContext | None = None) -> LoadedSuite:
    """Load any supported suite file; raises SpecError naming file, line and field.

    Graders are validated under ``context`` (see core.context) with the suite file's folder
    as ``base_dir``, so relative paths in configs mean the same in every format.
    """
    path = Path(path)
    context = context or SpecContext()
    if path.is_dir():
        for name in ("eval.yaml", "eval.yml"):
            if (path / name).is_file():
                path = path / name
                break
        else:
            raise SpecError(f"no eval.yaml in directory {path}")
    doc = YamlDoc(path)
    if not isinstance(doc.data, dict):
        raise SpecError("a suite file must be a mapping with name, graders and dataset", where=str(path))
    for fmt in _formats():
        if fmt.detect(path, doc.data):
            data = {**doc.data, "results": str(results)} if results else doc.data
            try:
                suite = fmt.load(path, data, context)
            except SpecError as exc:
                raise doc.locate(exc) from None
            break
    else:
        suite = _load_assay(doc, results, context.at(doc.path.parent.resolve()))
    suite.inputs += [p for p in (path, results) if p is not None and p not in suite.inputs]
    check_runnable(suite)
    return suite


def check_runnable(suite: LoadedSuite) -> None:
    """Refuse a suite that would grade nothing or decide nothing: no samples, or a sample
    whose graders all weigh zero under a threshold (its weighted score is undefined)."""
    where = str(suite.source) if suite.source else suite.name
    if not suite.samples:
        raise SpecError("no samples to grade (the dataset is empty)", where=where)
    if suite.threshold is None:
        return
    for sample in suite.samples:
        specs = suite.graders_for(sample.id)
        if specs and not any(spec.weight > 0 for spec in specs):
            raise SpecError(f"every grader of sample {sample.id!r} has weight 0, so its weighted score "
                            f"cannot be compared with the threshold {suite.threshold}; give a grader a weight > 0",
                            where=where)


def _formats() -> list[Any]:
    """The waza and Vally loaders (each a module with ``detect`` and ``load``)."""
    found = []
    for name in ("waza", "vally"):
        try:
            found.append(importlib.import_module(f"assay.runner.formats.{name}"))
        except ModuleNotFoundError:
            continue
    return found


def _load_assay(doc: YamlDoc, results: Path | None, context: SpecContext) -> LoadedSuite:
    try:
        suite = SuiteFile.model_validate(doc.data)
    except ValidationError as exc:
        first = format_loc(exc.errors(include_url=False)[0]["loc"])
        raise SpecError(SpecError.from_validation(exc).message, where=doc.where(first)) from None
    graders = compile_graders(suite.graders, doc, "graders", context)
    if suite.dataset is not None and suite.samples is not None:
        raise doc.error("give either `dataset` or inline `samples`, not both", "samples")
    base = doc.path.parent
    source = results or (base / suite.dataset if suite.dataset else None)
    if source is not None:
        samples = load_dataset(source, delimiter=suite.delimiter)
        _check_outputs(samples, str(source))
    elif suite.samples is not None:
        samples = samples_from_rows(((doc.line("samples", i) or 0, row)
                                     for i, row in enumerate(suite.samples)), source=str(doc.path))
        _check_outputs(samples, doc.where("samples"))
    else:
        raise SpecError("give a `dataset` file or inline `samples`", where=str(doc.path))
    return LoadedSuite(name=suite.name, samples=samples, graders=graders, threshold=suite.threshold,
                       cost_ordered=suite.cost_ordered, source=doc.path, format="assay",
                       inputs=[doc.path] + ([source] if source is not None else []))


def _check_outputs(samples: list, where: str) -> None:
    """A dataset where no row has anything to grade is a mistake (a misnamed column), not
    a run in which every sample fails."""
    if not samples or any(s.output is not None or s.transcript or s.workspace for s in samples):
        return
    columns = sorted({k for s in samples[:100] for k in s.metadata})
    hint = f"; its columns are: {', '.join(columns[:20])}" if columns else ""
    raise SpecError(f"no row has an `output` (nor a transcript or workspace) to grade{hint}", where=where)


def compile_graders(specs: list[Any], doc: YamlDoc, path: str, context: SpecContext) -> list[CompiledSpec]:
    """Compile a list of grader specs; errors carry the file, line and field path."""
    out = []
    names: dict[str, int] = {}
    for i, raw in enumerate(specs):
        here = f"{path}[{i}]"
        try:
            compiled = compile_spec(raw, path=here, context=context)
        except SpecError as exc:
            raise SpecError(exc.message, path=exc.path, where=doc.where(exc.focus or here)) from None
        if compiled.name in names:
            raise SpecError(f"duplicate grader name {compiled.name!r} (also {path}[{names[compiled.name]}]); "
                            "give each grader a distinct `name`", path=f"{here}.name", where=doc.where(here))
        names[compiled.name] = i
        out.append(compiled)
    return out
