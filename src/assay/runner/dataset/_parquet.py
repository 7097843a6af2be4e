"""Parquet datasets, read with pyarrow (the optional ``assay[arrow]`` extra).

Rows are numbered from 1 in file order; that number stands where the text formats name a
line. Parquet's typed columns arrive as Python values (text, numbers, lists, structs as
objects); a column whose values JSON cannot hold exactly (timestamps, decimals, bytes) is
read as Arrow gives it and compared as its JSON text by the graders.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

from assay.core.errors import SpecError

BATCH_ROWS = 65_536
"""Rows converted to Python at a time, so a large file is not held twice in memory."""


def parquet_rows(fh: BinaryIO, path: Path) -> Iterator[tuple[int, Any]]:
    """``(row number, row)`` pairs of a Parquet file; SpecError when it cannot be read."""
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise SpecError("reading a Parquet dataset needs pyarrow: pip install 'assay[arrow]'",
                        where=str(path)) from None
    try:
        reader = pq.ParquetFile(fh)
        batches = reader.iter_batches(batch_size=BATCH_ROWS)
        line = 0
        for batch in batches:
            for row in batch.to_pylist():
                line += 1
                yield line, row
    except (pa.ArrowException, OSError) as exc:
        raise SpecError(f"cannot read Parquet dataset: {exc}", where=str(path)) from None
