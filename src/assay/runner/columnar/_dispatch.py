"""Which kernel grades which grader, and the object path for everything a kernel leaves.

A grader type has a kernel when it is listed in ``KERNELS``; a kernel may still decline a
config (a regex needing backtracking) or a column (numbers, objects), and may leave single
rows undecided. Those go through ``grade_many``, the object path, for those rows only, so
every row gets exactly the result the object path would give.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from time import perf_counter
from typing import Any

import numpy as np

from assay.core.grader import Grader
from assay.runner.columnar import contains, exact_match, json_schema, regex, similarity
from assay.runner.columnar._columns import Columns, Graded, assemble, from_objects, merge_objects
from assay.runner.columnar._frame import Frame
from assay.runner.columnar._support import is_preset
from assay.runner.execute import collector_paused, grade_many

log = logging.getLogger("assay.runner.columnar")

Kernel = Callable[..., Graded | None]
KERNELS: dict[str, Kernel] = {
    "exact_match": exact_match.grade,
    "contains": contains.grade,
    "regex": regex.grade,
    "json_schema": json_schema.grade,
    "similarity": similarity.grade,
}
"""Grader type -> kernel ``(grader, frame) -> Graded | None`` (None: the object path)."""


def grade_columns(grader: Grader, frame: Frame, *, with_details: bool = False, workers: int = 1) -> Columns:
    """One grader over every row of ``frame``: its kernel where it has one, else (and for the
    rows the kernel leaves) the object path."""
    with collector_paused():
        graded = _kernel(grader, frame, workers)
        if graded is not None and frame.opaque is not None:
            graded.undecided = frame.opaque if graded.undecided is None else graded.undecided | frame.opaque
        if graded is None:
            return from_objects(frame.n, grade_many(grader, frame.samples(np.arange(frame.n))))
        cols = assemble(graded, with_details)
        if graded.undecided is not None and graded.undecided.any():
            rows = np.flatnonzero(graded.undecided)
            merge_objects(cols, rows, grade_many(grader, frame.samples(rows)))
        return cols


def _kernel(grader: Grader, frame: Frame, workers: int) -> Graded | None:
    kernel = KERNELS.get(grader.type)
    if kernel is None or frame.n == 0 or not is_preset(type(grader), grader.config):
        return None
    try:
        if grader.type == "similarity":
            return kernel(grader, frame, workers=workers)
        return kernel(grader, frame)
    except Exception:  # noqa: BLE001  a kernel bug must not lose results: the object path grades
        log.warning("columnar kernel for %s failed; grading %d rows through the object path",
                    grader.type, frame.n, exc_info=True)
        return None


def timed_columns(grader: Grader, frame: Frame, **kwargs: Any) -> tuple[Columns, float]:
    """``grade_columns`` and the time it took per row, in ms (the runner's ``latency_ms``)."""
    start = perf_counter()
    cols = grade_columns(grader, frame, **kwargs)
    return cols, (perf_counter() - start) * 1000.0 / max(frame.n, 1)
