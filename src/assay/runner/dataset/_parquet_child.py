"""A Parquet file from someone else, decoded in a process of its own with a memory limit.

Parquet compresses and dictionary-encodes: a file of a kilobyte can decode to gigabytes (one
long string repeated by a dictionary, a list of a million references to it). Row-group metadata
does not bound what a batch decodes to, so an uploaded file is read here, in a child whose data
segment is capped (``RLIMIT_DATA``), and its rows come back to the server as JSON lines. A bomb
ends this process with a clear error; the server only ever holds one line at a time.

Run as ``python -m assay.runner.dataset._parquet_child LIMIT_MB BATCH_ROWS`` with the file on stdin
(a seekable regular file). Writes one JSON row per line to stdout; on failure, exits 2 with
``{"message": ..., "row": N}`` as the last line of stderr.
"""

from __future__ import annotations

import json
import os
import resource
import sys
from typing import Any

TARGET_BATCH_BYTES = 16 << 20
"""Rows decoded at a time: about this many bytes by the row group's metadata, and at most the
``max_rows`` the parent gives, because metadata cannot see a dictionary-encoded value repeated
in every row (a long system prompt, say)."""


def main(limit_mb: int, max_rows: int) -> int:
    limit = limit_mb << 20
    resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))
    import orjson
    import pyarrow as pa
    import pyarrow.parquet as pq
    from pydantic_core import to_jsonable_python

    def dumps(row: Any) -> bytes:
        try:
            return orjson.dumps(row, default=to_jsonable_python)
        except (orjson.JSONEncodeError, TypeError):  # deeper than orjson goes: the slower encoder
            return json.dumps(row, default=to_jsonable_python, ensure_ascii=False,
                              separators=(",", ":")).encode("utf-8")

    too_big = (f"decodes to more than {limit_mb} MiB at once (a compressed or dictionary-encoded value repeated "
               "too often); write it without such repetition, or as JSONL")
    out = sys.stdout.buffer
    row = 0
    try:
        reader = pq.ParquetFile(os.fdopen(0, "rb", closefd=False))
        meta = reader.metadata
        for group in range(meta.num_row_groups):
            info = meta.row_group(group)
            per_row = max(1, info.total_byte_size // max(1, info.num_rows))
            size = max(1, min(max_rows, TARGET_BATCH_BYTES // per_row))
            for batch in reader.iter_batches(batch_size=size, row_groups=[group]):
                for item in batch.to_pylist():
                    row += 1
                    out.write(dumps(item))
                    out.write(b"\n")
        out.flush()
        return 0
    except MemoryError:
        return _fail(too_big, row + 1)
    except RecursionError:
        return _fail("nested too deeply (about 1,000 levels at most)", row + 1)
    except (pa.ArrowException, OSError, ValueError) as exc:
        if "malloc" in str(exc) or "realloc" in str(exc):  # Arrow's own allocator hit the limit
            return _fail(too_big, row + 1)
        return _fail(f"cannot read Parquet dataset: {str(exc)[:500]}", row + 1)


def _fail(message: str, row: int) -> int:
    sys.stdout.buffer.flush()
    sys.stderr.write("\n" + json.dumps({"message": message, "row": row}) + "\n")
    return 2


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]), int(sys.argv[2])))
