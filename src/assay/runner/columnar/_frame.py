"""The table being graded: its columns as Arrow text arrays for the kernels, and as Samples
for the rows the object path grades.

pyarrow is imported here, and only by the columnar package: ``assay[arrow]`` installs it.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
from pydantic import ValidationError

from assay.core.errors import SpecError
from assay.core.sample import Sample

COLUMNS = ("id", "input", "output", "expected", "metadata")
"""Columns with a meaning; any other column goes into each sample's ``metadata``, as the
dataset readers do with other dataset fields."""


def as_table(data: Any) -> pa.Table:
    """An Arrow table from a pyarrow Table or RecordBatch, or a pandas or polars frame
    (converted through Arrow). Raises SpecError for anything else."""
    if isinstance(data, pa.Table):
        return data
    if isinstance(data, pa.RecordBatch):
        return pa.Table.from_batches([data])
    module = type(data).__module__.split(".")[0]
    if module == "pandas":
        return pa.Table.from_pandas(data, preserve_index=False)
    if module == "polars":
        return data.to_arrow()
    raise SpecError(f"grade_table takes a pyarrow Table or RecordBatch, or a pandas or polars DataFrame, "
                    f"got {type(data).__name__}")


def _text_array(column: pa.ChunkedArray | pa.Array) -> pa.LargeStringArray | None:
    """The column as one large_string array (nulls kept), or None when it does not hold text."""
    kind = column.type
    if pa.types.is_dictionary(kind):
        if not (pa.types.is_string(kind.value_type) or pa.types.is_large_string(kind.value_type)):
            return None
    elif not (pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_null(kind)
              or pa.types.is_string_view(kind)):
        return None
    column = column.cast(pa.large_string())
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    return column


class Frame:
    """One table, read once: ``text(name)`` gives a column to the kernels, ``values`` and
    ``samples`` give rows to Python (failure reasons, the object path)."""

    def __init__(self, table: pa.Table) -> None:
        if "output" not in table.column_names:
            raise SpecError(f"the table has no `output` column (its columns: {', '.join(table.column_names)})")
        self.table = table
        self.n = table.num_rows
        self._text: dict[str, pa.LargeStringArray | None] = {}
        self.opaque: np.ndarray | None = None
        """bool per row: rows no kernel may decide (their values are not in the text columns)."""

    def text(self, name: str) -> pa.LargeStringArray | None:
        """Column ``name`` as text (all null when the table lacks it), or None when the column
        holds other values (numbers, objects): kernels leave those to the object path."""
        if name not in self._text:
            if name in self.table.column_names:
                self._text[name] = _text_array(self.table.column(name))
            else:
                self._text[name] = pa.nulls(self.n, pa.large_string())
        return self._text[name]

    def filled(self, name: str) -> pa.LargeStringArray | None:
        """``text(name)`` with null as the empty string (``as_text(None)`` is ``""``)."""
        arr = self.text(name)
        return arr if arr is None or not arr.null_count else pc.fill_null(arr, "")

    @cached_property
    def ascii(self) -> np.ndarray:
        """Rows whose output and expected texts are both ASCII (null counts as ASCII)."""
        ok = np.ones(self.n, dtype=bool)
        for name in ("output", "expected"):
            arr = self.filled(name)
            if arr is not None:
                ok &= pc.string_is_ascii(arr).to_numpy(zero_copy_only=False)
        return ok

    def values(self, name: str, rows: np.ndarray) -> list[Any]:
        """The Python values of column ``name`` at ``rows`` (None where the table lacks it)."""
        if name not in self.table.column_names:
            return [None] * len(rows)
        return self.table.column(name).take(pa.array(rows, pa.int64())).to_pylist()

    def samples(self, rows: np.ndarray) -> list[Sample]:
        """Samples for ``rows``, as ``assay.grade_batch`` builds them from the same row dicts
        (a row without an id is named by its position); SpecError names a bad row."""
        taken = self.table.take(pa.array(rows, pa.int64())).to_pylist()
        return [_sample(row, int(i)) for i, row in zip(rows, taken)]


def _sample(row: dict[str, Any], index: int) -> Sample:
    data = {k: v for k, v in row.items() if k in COLUMNS}
    extra = {k: v for k, v in row.items() if k not in COLUMNS}
    if data.get("id") in (None, ""):
        data["id"] = str(index)
    if extra:
        meta = data.get("metadata") or {}
        if not isinstance(meta, dict):
            raise SpecError("metadata: must be an object", where=f"row {index}")
        data["metadata"] = {**extra, **meta}
    if data.get("metadata") is None:
        data.pop("metadata", None)
    try:
        return Sample.model_validate(data)
    except ValidationError as exc:
        raise SpecError.from_validation(exc, where=f"row {index} (sample {data.get('id')!r})") from None


def take_text(arr: pa.Array, rows: Sequence[int] | np.ndarray) -> list[str]:
    """Python strings of ``arr`` at ``rows``."""
    return arr.take(pa.array(rows, pa.int64())).to_pylist()


def text_buffers(arr: pa.LargeStringArray) -> tuple[pa.Buffer, pa.Buffer | bytes, int, int]:
    """The raw layout of a text column: its offsets and data buffers (``b""`` when every row is
    empty or null), its offset into them and its length."""
    _, offsets, data = arr.buffers()
    return offsets, data or b"", arr.offset, len(arr)


def valid(arr: pa.Array) -> np.ndarray:
    """Which rows hold a value, as booleans (from the null bitmap: no value is copied)."""
    return arr.is_valid().to_numpy(zero_copy_only=False)
