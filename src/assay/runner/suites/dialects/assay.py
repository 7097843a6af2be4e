"""assay's own suite format, strict (an unknown key is an error)::

    name: presets
    dataset: data.jsonl        # JSONL, CSV or JSON, relative to this file (or `samples:` inline)
    threshold: 0.8             # optional: minimum weighted score per sample
    cost_ordered: false        # optional: skip expensive graders once a cheap one failed
    repeats: 3                 # optional: grade each sample 3 times (judges answer afresh)
    pass_k: 2                  # optional: the k of pass@k (default: repeats)
    graders:
      - {type: exact_match, name: exact, weight: 2}

``results`` (``--results``) replaces the dataset with another file of outputs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import Field

from assay.core.context import SpecContext
from assay.core.errors import SpecError
from assay.core.spec import Fraction
from assay.runner.dataset import check_outputs, load_dataset, samples_from_rows
from assay.runner.suites.dialects import detect_assay
from assay.runner.suites.filemodel import FileModel, read_model
from assay.runner.suites.graders import compile_graders
from assay.runner.suites.suite import DialectOptions, Suite
from assay.runner.yamlsrc import YamlDoc

NAME = "assay"


class AssayFile(FileModel):
    """An assay suite file."""

    name: str = Field(description="Suite name, used in reports.")
    description: str | None = None
    dataset: str | None = Field(default=None, description="Path to a JSONL, CSV, TSV or JSON dataset.")
    delimiter: Literal[",", ";", "\t", "tab", "|"] | None = Field(
        default=None, description="Cell separator of a CSV dataset (default `,`; tab for .tsv).")
    samples: list[dict[str, Any]] | None = Field(default=None, description="Inline samples.")
    graders: list[dict[str, Any]] = Field(min_length=1, description="Grader specs applied to every sample.")
    threshold: Fraction | None = Field(default=None, description="Minimum weighted score for a sample to pass.")
    cost_ordered: bool = Field(default=False, strict=True)
    repeats: int = Field(default=1, ge=1, le=100, strict=True,
                         description="Grade each sample this many times (LLM judges answer afresh each time).")
    pass_k: int | None = Field(default=None, ge=1, le=100, strict=True,
                               description="The k of pass@k and pass^k (default: `repeats`, else the most attempts "
                                           "of any task); tasks with fewer scored attempts are reported apart.")


detect = detect_assay


def load(doc: YamlDoc, *, results: Path | None, context: SpecContext,
         options: DialectOptions | None = None) -> Suite:
    """Load an assay suite file. Raises SpecError naming file, line and field."""
    warnings: list[str] = []
    suite = read_model(AssayFile, doc.data, doc, warnings=warnings)
    graders = compile_graders(suite.graders, doc, ("graders",), context)
    if suite.dataset is not None and suite.samples is not None:
        raise doc.error("give either `dataset` or inline `samples`, not both", "samples")
    source = results or (doc.path.parent / suite.dataset if suite.dataset else None)
    if source is not None:
        samples = load_dataset(source, delimiter=suite.delimiter)
        check_outputs(samples, str(source))
    elif suite.samples is not None:
        samples = samples_from_rows(((doc.line("samples", i) or 0, _with_id(row, i))
                                     for i, row in enumerate(suite.samples)), source=str(doc.path))
        check_outputs(samples, doc.where("samples"))
    else:
        raise SpecError("give a `dataset` file or inline `samples`", where=str(doc.path))
    return Suite(name=suite.name, samples=samples, graders=graders, threshold=suite.threshold,
                 cost_ordered=suite.cost_ordered, dialect=NAME, source=doc.path, definition=suite,
                 inputs=[doc.path] + ([source] if source is not None else []), repeats=suite.repeats,
                 pass_k=suite.pass_k, warnings=warnings)


def _with_id(row: object, index: int) -> object:
    """An inline sample without an id is named by its position (``sample-1``, ...): two of them
    may share a line (`samples: [{output: a}, {output: b}]`), so the line cannot name them."""
    if isinstance(row, dict) and row.get("id") in (None, ""):
        return {**row, "id": f"sample-{index + 1}"}
    return row
