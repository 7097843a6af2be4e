"""The columnar path: grade a table's columns at once, without a Python object per row.

``grade_table`` (re-exported as ``assay.grade_table``) takes an Arrow table (or a pandas or
polars frame) with ``output`` and ``expected`` columns and returns result columns. The preset
graders run as kernels over whole columns (each grader's ``Traits.kernel``); any other grader, and any
row a kernel cannot decide, goes through the object path (``grade_batch``), so every row's
result is the one the object path gives (tests/columnar checks it row by row).

pyarrow is optional (``pip install 'assay[arrow]'``): ``available()`` says whether it is
installed, and nothing here imports it until a table is graded.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from assay.core.errors import SpecError
from assay.core.interfaces import Resources
from assay.core.spec import CompiledSpec, GraderSpec, compile_spec

if TYPE_CHECKING:
    import pyarrow as pa

    from assay.runner.suites import Suite

__all__ = ["MIN_ROWS", "available", "grade_table", "has_kernel", "path_in_use", "takes"]

MIN_ROWS = 5_000
"""Samples from which ``assay run`` takes the columnar path: below, importing pyarrow
(about 0.1 to 0.2 s) costs more than the kernels save."""

SpecLike = Mapping[str, Any] | GraderSpec | CompiledSpec


def available() -> bool:
    """True when pyarrow is installed, so the columnar path can run."""
    return importlib.util.find_spec("pyarrow") is not None


def path_in_use() -> str:
    """``columnar`` or ``object``: which path ``assay run`` takes for preset-only suites here."""
    return "columnar" if available() else "object"


def has_kernel(spec: CompiledSpec) -> bool:
    """True when ``spec``'s grader runs as a columnar kernel (the preset graders; a regex
    whose patterns all run on RE2)."""
    from assay.runner.columnar._support import has_kernel as kernel_for

    return available() and kernel_for(spec)


def takes(suite: Suite) -> bool:
    """True when ``suite`` can take the columnar path: pyarrow is installed, every sample is
    graded by the same graders, at least one has a kernel (the others grade the same chunks
    through their ``grade_batch``), and cost ordering has nothing to skip (one cost rank)."""
    if not available() or suite.sample_graders or not suite.graders:
        return False
    if suite.cost_ordered and len({spec.taxonomy.cost for spec in suite.graders}) > 1:
        return False
    return any(has_kernel(spec) for spec in suite.graders)


def grade_table(spec_or_suite: SpecLike | Sequence[SpecLike] | Suite, table: Any, *,
                resources: Resources | None = None, workers: int = 0,
                threshold: float | None = None) -> pa.Table:
    """Grade every row of ``table`` and return the results as an Arrow table.

    ``spec_or_suite`` is one grader spec ``{type, name?, config?, weight?}``, a list of specs,
    or a loaded ``Suite`` (its graders and threshold). ``table`` is a pyarrow Table or
    RecordBatch, or a pandas or polars DataFrame, with an ``output`` column and optionally
    ``expected``, ``id``, ``input`` and ``metadata`` (other columns go into metadata).

    One spec gives the columns ``status``, ``passed``, ``score``, ``reason``, ``error``;
    several give them per grader (``<name>.status``, ...) followed by the sample verdict
    (``status``, ``passed``, ``score``) as ``assay run`` decides it, with ``threshold`` (a
    suite's own unless given). An ``id`` column is passed through first. ``workers`` is the
    number of threads for levenshtein (0: one per core). Raises SpecError for an invalid spec
    or table; grading problems come back as rows with status ``error``.
    """
    if not available():
        raise SpecError("grade_table needs pyarrow: pip install 'assay[arrow]'")
    import numpy as np
    import pyarrow as pa

    from assay.runner.columnar._columns import STATUSES
    from assay.runner.columnar._dispatch import grade_columns
    from assay.runner.columnar._frame import Frame, as_table
    from assay.runner.columnar._verdict import judge_rows
    from assay.runner.resources import Defaults

    resources = resources or Defaults.resources()
    specs, single, suite_threshold = _specs(spec_or_suite, resources)
    frame = Frame(as_table(table))
    columns: dict[str, pa.Array] = {}
    if "id" in frame.table.column_names:
        columns["id"] = frame.table.column("id")
    graded = []
    for spec in specs:
        cols = grade_columns(spec.build(resources), frame, workers=workers)
        graded.append((cols, spec.weight))
        prefix = "" if single else f"{spec.name}."
        columns.update({prefix + k: v for k, v in cols.arrays().items()})
    if not single:
        status, score = judge_rows(graded, threshold if threshold is not None else suite_threshold)
        columns["status"] = pa.DictionaryArray.from_arrays(pa.array(status, pa.int8()), pa.array(STATUSES))
        columns["passed"] = pa.array(status == 0)
        columns["score"] = pa.array(score, pa.float64(), mask=np.isnan(score))
    return pa.table(columns)


def _specs(given: Any, resources: Resources) -> tuple[list[CompiledSpec], bool, float | None]:
    """The compiled specs to grade with, whether there is just one spec, and a suite's threshold."""
    from assay.runner.resources import Defaults, build_context
    from assay.runner.suites import Suite

    specs: list[Any]  # in any form compile_spec takes
    if isinstance(given, Suite):
        if given.sample_graders:
            raise SpecError("grade_table grades every row with the same graders; this suite has task-level "
                            "graders for some samples (use assay run)")
        specs, single, threshold = list(given.graders), False, given.threshold
    elif isinstance(given, (Mapping, GraderSpec, CompiledSpec)):
        specs, single, threshold = [given], True, None
    elif isinstance(given, Sequence) and not isinstance(given, (str, bytes)):
        specs, single, threshold = list(given), False, None
    else:
        raise SpecError(f"grade_table takes a grader spec, a list of specs or a suite, got {type(given).__name__}")
    context = build_context(Defaults.settings(), resources)
    compiled = [s if isinstance(s, CompiledSpec) else compile_spec(s, path="" if single else f"graders[{i}]",
                                                                          context=context)
                for i, s in enumerate(specs)]
    names = [s.name for s in compiled]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if dupes and not single:
        raise SpecError(f"grader names must differ to name their result columns; {dupes[0]!r} is given twice "
                        "(set `name` in the specs)")
    return compiled, single, threshold
