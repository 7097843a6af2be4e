"""Which kernel grades which grader, and the object path for everything a kernel leaves.

A grader has a kernel when its traits name one (``Traits.kernel``); a kernel may still decline a
config (a regex needing backtracking) or a column (numbers, objects), and may leave single
rows undecided. Those go through ``grade_many``, the object path, for those rows only, so
every row gets exactly the result the object path would give.
"""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor
from time import perf_counter
from typing import Any

import numpy as np

from assay.core.grader import Grader
from assay.runner.columnar._columns import Columns, Graded, assemble, from_objects, merge_objects
from assay.runner.columnar._frame import Frame
from assay.runner.columnar._support import kernel_path, load_kernel
from assay.runner.execute import collector_paused, grade_many

log = logging.getLogger("assay.runner.columnar")

def grade_columns(grader: Grader, frame: Frame, *, with_details: bool = False, workers: int = 1,
                  pool: ThreadPoolExecutor | None = None) -> Columns:
    """One grader over every row of ``frame``: its kernel where it has one, else (and for the
    rows the kernel leaves) the object path, I/O-bound graders on ``pool``."""
    with collector_paused():
        graded = _kernel(grader, frame, workers)
        if graded is not None and frame.opaque is not None:
            graded.undecided = frame.opaque if graded.undecided is None else graded.undecided | frame.opaque
        if graded is None:
            return from_objects(frame.n, grade_many(grader, frame.samples(np.arange(frame.n)), pool=pool))
        cols = assemble(graded, with_details)
        if graded.undecided is not None and graded.undecided.any():
            rows = np.flatnonzero(graded.undecided)
            merge_objects(cols, rows, grade_many(grader, frame.samples(rows), pool=pool))
        return cols


def _kernel(grader: Grader, frame: Frame, workers: int) -> Graded | None:
    path = kernel_path(type(grader), grader.config)
    if path is None or frame.n == 0:
        return None
    try:
        return load_kernel(path)(grader, frame, workers=workers)
    except Exception:  # noqa: BLE001  a kernel bug must not lose results: the object path grades
        log.warning("columnar kernel for %s failed; grading %d rows through the object path",
                    grader.type, frame.n, exc_info=True)
        return None


def timed_columns(grader: Grader, frame: Frame, **kwargs: Any) -> tuple[Columns, float]:
    """``grade_columns`` and the time it took per row, in ms (the runner's ``latency_ms``)."""
    start = perf_counter()
    cols = grade_columns(grader, frame, **kwargs)
    return cols, (perf_counter() - start) * 1000.0 / max(frame.n, 1)
