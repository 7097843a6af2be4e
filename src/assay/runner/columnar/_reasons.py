"""Failure reasons of exact_match and contains, built column-wise for the common rows.

The text of each reason is the grader's own (``exact_match.difference_reason``, ``contains.missing_reason``),
rebuilt from Arrow pieces for rows where that is exact: both values text, and the quoted
pieces printed by ``repr()`` as they are, between single quotes (no quote, backslash or
unprintable character, as ``_kernels.slice_chars`` decides with Python's own tables). The
other rows (nulls, escapes) are left for the grader's functions to word. Without the C helper
every row is left to them.

The texts stay a column (``grade_table`` answers them as one); the phrases they are
(``core.messages.Said``, the code and values a page says them by) are made only when results
are built row by row (``Columns.results``: ``assay run``, the Ray workers), and only for
those rows: the failing ones.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from assay.graders.contains import MISSING
from assay.graders.exact_match import DIFFERS_AT
from assay.runner.columnar._frame import text_buffers, valid

try:
    from assay.runner.columnar import _kernels
except ImportError:  # not built: the grader's functions word every reason
    first_difference: Callable[..., tuple[bytes, bytes, bytes]] | None = None
    slice_chars: Callable[..., tuple[bytes, bytes, bytes, bytes]] | None = None
else:
    first_difference, slice_chars = _kernels.first_difference, _kernels.slice_chars

SHOWN = 40
"""Characters of each text quoted from the first difference on (``exact_match.difference_reason``)."""
NEEDLE = 120
"""Characters of a needle quoted whole (``contains.missing_reason`` through ``_text.preview``)."""


Sayer = Callable[[], list[str | None]]
"""The reasons of a column as phrases (``Said``), one per row, None where a row has none."""
Built = tuple[pa.Array, np.ndarray, Sayer]
"""Reasons built column-wise: their texts (null where not built), which rows have one, and
how to say those as phrases."""


@dataclass(slots=True)
class Worded:
    """A kernel's reasons for the rows it explains: ``text`` as a column, ``said`` the same
    reasons as phrases, made on demand (``_columns.Columns.results``)."""

    text: pa.Array
    said: Sayer


def _join(*parts: str | pa.Array) -> pa.Array:
    """Texts and string columns joined row by row."""
    text = pa.large_string()
    return pc.binary_join_element_wise(*(pa.scalar(p, text) if isinstance(p, str) else p for p in parts),
                                       pa.scalar("", text))


def _slices(arr: pa.LargeStringArray, rows: np.ndarray, start: bytes, limit: int) -> tuple[pa.Array, np.ndarray,
                                                                                            np.ndarray]:
    assert slice_chars is not None  # the callers return early when the C helper is not built
    offsets, data, plain, more = slice_chars(*text_buffers(arr), rows.tobytes(), start, limit)
    text = pa.Array.from_buffers(pa.large_string(), len(rows), [None, pa.py_buffer(offsets), pa.py_buffer(data)])
    return text, np.frombuffer(plain, dtype=bool), np.frombuffer(more, dtype=bool)


def differ(a: pa.LargeStringArray, b: pa.LargeStringArray, rows: np.ndarray) -> Built | None:
    """``exact_match.difference_reason`` for ``rows`` where both values are unequal text: the reasons
    (null where not built here), which rows have one and their phrases; None without the C helper."""
    if first_difference is None:
        return None
    rows = rows.astype(np.int64)
    chars, a_pos, b_pos = first_difference(*text_buffers(a), *text_buffers(b), rows.tobytes())
    got, got_plain, _ = _slices(a, rows, a_pos, SHOWN)
    want, want_plain, _ = _slices(b, rows, b_pos, SHOWN)
    index = pa.array(np.frombuffer(chars, dtype=np.int64))
    texts = valid(a)[rows] & valid(b)[rows]
    done = texts & got_plain & want_plain & (np.frombuffer(chars, dtype=np.int64) >= 0)
    reasons = pc.if_else(pa.array(done), _join("output differs from expected at character ",
                                               pc.cast(index, pa.large_string()), ": got '", got, "', expected '",
                                               want, "'"), pa.nulls(len(rows), pa.large_string()))

    def said() -> list[str | None]:
        told = DIFFERS_AT.told
        return [told(text, {"index": i, "got": f"'{g}'", "expected": f"'{w}'"}) if text is not None else None
                for text, i, g, w in zip(reasons.to_pylist(), index.to_pylist(), got.to_pylist(), want.to_pylist())]

    return reasons, done, said


def missing(needle: pa.LargeStringArray, rows: np.ndarray) -> Built | None:
    """``contains.missing_reason`` for ``rows`` where output and needle are text: the reasons (null
    where not built here), which rows have one and their phrases; None without the C helper."""
    if slice_chars is None:
        return None
    rows = rows.astype(np.int64)
    head, plain, more = _slices(needle, rows, b"", NEEDLE)
    shown = pc.if_else(pa.array(more), _join(pc.utf8_slice_codeunits(head, 0, NEEDLE - 1), "…"), head)
    done = plain & valid(needle)[rows]
    reasons = pc.if_else(pa.array(done), _join("output does not contain '", shown, "'"),
                         pa.nulls(len(rows), pa.large_string()))

    def said() -> list[str | None]:
        told = MISSING.told
        return [told(text, {"needle": f"'{n}'"}) if text is not None else None
                for text, n in zip(reasons.to_pylist(), shown.to_pylist())]

    return reasons, done, said


def completed(built: Built | None, rows: np.ndarray,
              word: Callable[[np.ndarray], list[str]]) -> Worded | list[str | None]:
    """The reasons ``built`` for ``rows``, with ``word(rows it left)`` filling in the rest."""
    if built is None:
        return [*word(rows)]
    reasons, done, said = built
    if done.all():
        return Worded(reasons, said)
    left = np.flatnonzero(~done)
    worded = dict(zip(left.tolist(), word(rows[left])))
    full: list[str | None] = [None] * len(rows)
    for k, reason in worded.items():
        full[k] = reason

    def all_said() -> list[str | None]:
        out = said()
        for k, reason in worded.items():
            out[k] = reason
        return out

    return Worded(pc.if_else(pa.array(done), reasons, pa.array(full, pa.large_string())), all_said)
