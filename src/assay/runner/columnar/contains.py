"""``contains`` over columns: each row's expected text searched for in its output.

Arrow's substring kernels take one needle for a whole column; here every row has its own.
The C helper ``_kernels.contains_rows`` runs memmem over the two columns' buffers, without
Python objects (measured in bench/columnar.py: several million rows/s on one core, against
about one million for a loop over Python strings, which is used when the helper is not built).
Searching UTF-8 bytes gives the same answer as searching characters: a valid UTF-8 needle can
only match at character boundaries. ``ignore_case`` lower-cases ASCII rows (their casefold)
and leaves other rows to the object path.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from assay.graders.contains import Contains, missing_reason
from assay.runner.columnar._columns import Graded
from assay.runner.columnar._frame import Frame
from assay.runner.columnar._reasons import Worded, completed, missing

try:
    from assay.runner.columnar import _kernels
except ImportError:  # not built (no C compiler at install time): same results, slower
    contains_rows: Callable[..., bytes] | None = None
else:
    contains_rows = _kernels.contains_rows


def grade(grader: Contains, frame: Frame, *, workers: int = 1) -> Graded | None:
    hay, needle = frame.filled("output"), frame.filled("expected")
    if hay is None or needle is None:
        return None
    undecided = None
    fold = grader.config.ignore_case
    if fold:
        undecided = ~frame.ascii
        hay, needle = pc.ascii_lower(hay), pc.ascii_lower(needle)
    passed = row_contains(hay, needle)

    def word(rows: np.ndarray) -> list[str]:
        reasons: list[str] = []
        for out, exp in zip(frame.values("output", rows), frame.values("expected", rows)):
            text = "" if exp is None else exp
            reasons.append(missing_reason(text.casefold() if fold else text, out, exp))
        return reasons

    def explain(rows: np.ndarray, with_details: bool) -> tuple[Worded | list[str | None], None]:
        return completed(missing(needle, rows), rows, word), None

    return Graded(passed, explain, undecided=undecided)


def row_contains(hay: pa.LargeStringArray, needle: pa.LargeStringArray) -> np.ndarray:
    """bool per row: ``needle[i] in hay[i]`` (neither column has nulls)."""
    n = len(hay)
    if contains_rows is None:
        return np.fromiter((b in a for a, b in zip(hay.to_pylist(), needle.to_pylist())), dtype=bool, count=n)
    _, h_off, h_data = hay.buffers()
    _, n_off, n_data = needle.buffers()
    found = contains_rows(h_off, h_data or b"", n_off, n_data or b"", n, hay.offset, needle.offset)
    return np.frombuffer(found, dtype=np.bool_)
