"""Parquet datasets, read with pyarrow (the optional ``assay[arrow]`` extra).

Rows are numbered from 1 in file order; that number stands where the text formats name a
line. Parquet's typed columns arrive as Python values (text, numbers, lists, structs as
objects); a column whose values JSON cannot hold exactly (timestamps, decimals, bytes) is
read as Arrow gives it and compared as its JSON text by the graders.

A file from someone else (an upload to the service) is decoded by ``untrusted_parquet_rows`` in
a child process with a memory limit instead: see ``_parquet_child``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import orjson

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


DECODE_LIMIT_MB = 2048
"""Memory the child decoding an untrusted Parquet file may use (its data segment)."""
BATCH_BYTES = 256 << 20
"""A batch's rows are at most this many bytes when each row is within the caller's ``max_row_bytes``."""


def untrusted_parquet_rows(fh: BinaryIO, path: Path, *, max_row_bytes: int = 1 << 20,
                           limit_mb: int = DECODE_LIMIT_MB) -> Iterator[tuple[int, Any]]:
    """``parquet_rows`` for a file nobody vouches for: decoded in a child process whose memory is
    capped at ``limit_mb``, so a decompression bomb is a SpecError, not a server out of memory.
    Rows are decoded ``BATCH_BYTES // max_row_bytes`` at a time (1 to 1,024), so a file whose rows
    keep within ``max_row_bytes`` decodes within the cap. ``fh`` must be a regular file (the
    child reads it as its stdin)."""
    fh.seek(0)
    rows = max(1, min(1024, BATCH_BYTES // max(1, max_row_bytes)))
    errors = tempfile.TemporaryFile(prefix="assay-parquet-")  # a file, not a pipe: it never blocks the child
    child = subprocess.Popen([sys.executable, "-m", "assay.runner.dataset._parquet_child", str(limit_mb), str(rows)],
                             stdin=fh, stdout=subprocess.PIPE, stderr=errors, close_fds=True,
                             env={"PATH": "/usr/bin:/bin", "ARROW_DEFAULT_MEMORY_POOL": "system",
                                  "OMP_NUM_THREADS": "1", "PYTHONPATH": ":".join(sys.path)})
    assert child.stdout is not None
    line = 0
    try:
        for text in child.stdout:
            line += 1
            try:
                row = orjson.loads(text)
            except orjson.JSONDecodeError:  # orjson's depth limit is below the readers' (about 1,000)
                raise SpecError("nested too deeply (about 1,000 levels at most)", where=f"{path}:{line}") from None
            yield line, row
        if child.wait() != 0:
            errors.seek(0)
            message, row_number = _failure(errors.read()[-4096:], child.returncode, line, limit_mb)
            raise SpecError(message, where=f"{path}:{row_number}")
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
        child.stdout.close()
        errors.close()


def _failure(err: bytes, code: int, rows: int, limit_mb: int) -> tuple[str, int]:
    """The message and row number of a child's failure, from its last stderr line."""
    last = err.strip().rsplit(b"\n", 1)[-1]
    try:
        report = json.loads(last)
        return str(report["message"]), int(report["row"])
    except (ValueError, KeyError, TypeError):
        how = f"was stopped by signal {-code}" if code < 0 else f"stopped (exit {code})"
        return (f"cannot read Parquet dataset: the decoder {how} after {rows:,} rows; the file is damaged or "
                f"decodes to more than {limit_mb:,} MiB (a value repeated too often): write it as JSONL",
                rows + 1)
