"""Datasets arriving over the API, inline rows or an uploaded file, read by the engine's
hardened dataset readers and turned into the rows a task stores.

A sample from an API caller may not name a ``workspace``: that is a folder of the server's,
which file graders would read.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path
from typing import IO, Any

from assay.core.errors import SpecError
from assay.core.sample import Sample
from assay.runner.dataset import load_dataset, samples_from_rows

SUFFIXES = (".jsonl", ".ndjson", ".json", ".csv", ".tsv")
MAX_NAME = 300
"""The longest file name kept (the column's width)."""


def rows_from_inline(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Stored rows from the ``dataset.rows`` of a request; SpecError names ``dataset.rows:N``."""
    return _stored(samples_from_rows(enumerate(rows, 1), source="dataset.rows"))


def upload_name(filename: str | None) -> str:
    """The name an uploaded file is known by: its last path component (a client may send
    ``../../etc/passwd.jsonl`` or ``C:\\data\\x.csv``), without control characters, at most
    ``MAX_NAME`` characters with its suffix kept. Nothing is ever written under this name."""
    base = re.split(r"[/\\]", filename or "")[-1]
    base = "".join(ch for ch in base if ch.isprintable()).strip()
    if len(base) > MAX_NAME:
        suffix = Path(base).suffix[:16]
        base = base[:MAX_NAME - len(suffix)] + suffix
    return base


def rows_from_upload(filename: str, stream: IO[bytes]) -> list[dict[str, Any]]:
    """Stored rows from an uploaded JSONL, JSON, CSV or TSV file (the format from its name)."""
    suffix = Path(filename or "").suffix.lower()
    if suffix not in SUFFIXES:
        raise SpecError(f"cannot tell the format of {filename!r}: name the file .jsonl, .ndjson, .json, .csv or .tsv",
                        path="file")
    fd, tmp = tempfile.mkstemp(prefix="assay-upload-", suffix=suffix)
    try:
        with os.fdopen(fd, "wb") as out:
            while chunk := stream.read(1 << 20):
                out.write(chunk)
        try:
            samples = load_dataset(Path(tmp))
        except SpecError as exc:
            raise SpecError(exc.message.replace(tmp, filename), path=exc.path,
                            where=exc.where.replace(tmp, filename)) from None
        return _stored(samples)
    finally:
        os.unlink(tmp)


def _stored(samples: list[Sample]) -> list[dict[str, Any]]:
    out = []
    for i, sample in enumerate(samples, 1):
        if sample.workspace is not None:
            raise SpecError("workspace is not accepted over the API (it names a folder on the server)",
                            where=f"row {i} (sample {sample.id!r})")
        out.append(sample.model_dump(mode="json", exclude_none=True, exclude_defaults=True,
                                     include={"id", "input", "output", "expected", "metadata", "transcript",
                                              "outcome", "duration_ms"}) | {"id": sample.id})
    return out
