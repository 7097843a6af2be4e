"""Suites whose samples are read while they are graded, never held: an assay suite whose
dataset (or ``--results`` file) is a file in a streamable format. ``open_streamed`` gives such a
suite without samples, with its graders compiled and checked as ``load_suite`` checks them,
and the file to stream; any other suite (inline samples, waza and Vally suites, whose samples
are assembled from several files) is loaded whole by ``load_suite``.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import replace
from pathlib import Path

from assay.core.context import SpecContext
from assay.core.errors import SpecError
from assay.core.sample import Sample
from assay.runner.dataset import DELIMITERS
from assay.runner.suites.dialects import assay as assay_dialect
from assay.runner.suites.filemodel import read_model
from assay.runner.suites.graders import compile_graders
from assay.runner.suites.loader import check_runnable, detect_dialect, load_suite, suite_file
from assay.runner.suites.suite import Suite
from assay.runner.yamlsrc import YamlDoc


def open_streamed(path: Path, *, formats: Collection[str], results: Path | None = None,
                  dialect: str | None = None, context: SpecContext | None = None,
                  waza_version: str | None = None) -> tuple[Suite, Path | None]:
    """The suite at ``path`` and, when its samples are to be streamed, the file they are in
    (its suffix one of ``formats``, such as ``.jsonl``): the suite then has no samples. Else
    the suite as ``load_suite`` gives it, and None."""
    found = suite_file(Path(path))
    doc = YamlDoc(found, first_only=True)  # load_suite says what a second document means
    chosen = dialect or (detect_dialect(doc.data) if isinstance(doc.data, dict) else None)
    # Only assay's own files stream: a waza or Vally suite's samples come from several files.
    data = doc.data if chosen == assay_dialect.NAME else None
    dataset = data.get("dataset") if isinstance(data, dict) else None
    source = results or (found.parent / dataset if isinstance(dataset, str) else None)
    if (not isinstance(data, dict) or doc.more_at is not None or source is None or source.suffix.lower() not in formats
            or "samples" in data):
        return load_suite(path, results=results, dialect=dialect, context=context, waza_version=waza_version), None
    try:
        suite = _header(doc, source, context or SpecContext())
    except SpecError as exc:
        if exc.where or not exc.focus:
            raise
        raise doc.locate(exc) from None
    if results is not None and results not in suite.inputs:
        suite.inputs.append(results)
    return suite, source


def delimiter_of(suite: Suite, path: Path) -> str:
    """The cell separator of a CSV dataset: the suite's ``delimiter``, else tab for ``.tsv``
    and ``,`` for the rest."""
    chosen = getattr(suite.definition, "delimiter", None)
    if chosen is None:
        return "\t" if path.suffix.lower() == ".tsv" else ","
    return DELIMITERS[chosen]


def _header(doc: YamlDoc, source: Path, context: SpecContext) -> Suite:
    """The assay suite in ``doc`` with its graders compiled and no samples (streamed later)."""
    warnings: list[str] = []
    model = read_model(assay_dialect.AssayFile, doc.data, doc, warnings=warnings)
    graders = compile_graders(model.graders, doc, ("graders",),
                              context.at(doc.path.parent.resolve()))
    suite = Suite(name=model.name, samples=[], graders=graders, threshold=model.threshold,
                  cost_ordered=model.cost_ordered, dialect=assay_dialect.NAME, source=doc.path, definition=model,
                  inputs=[doc.path, source], warnings=warnings, repeats=model.repeats,
                  pass_k=model.pass_k)
    # check_runnable's per-sample checks, on one stand-in sample: every sample has these graders.
    check_runnable(replace(suite, samples=[Sample(id="-", output="")]))
    return suite
