"""Datasets: JSONL or CSV rows with ``id``, ``input``, ``output``, ``expected``, ``metadata``.

Columns that are not Sample fields go into ``metadata`` (the product spec's "other dataset
fields"). Every error names the file and line.
"""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
from pydantic import ValidationError

from assay.core.errors import SpecError
from assay.core.sample import Sample

SAMPLE_FIELDS = frozenset(Sample.model_fields)


def load_dataset(path: Path) -> list[Sample]:
    """Read a dataset; raises SpecError with ``file:line`` on the first bad row or duplicate id."""
    suffix = path.suffix.lower()
    if not path.is_file():
        raise SpecError(f"dataset file not found: {path}")
    if suffix in (".jsonl", ".ndjson"):
        rows = _jsonl_rows(path)
    elif suffix == ".csv":
        rows = _csv_rows(path)
    elif suffix == ".json":
        rows = _json_rows(path)
    else:
        raise SpecError(f"unsupported dataset format {suffix!r}: use .jsonl, .csv or .json", where=str(path))
    return samples_from_rows(rows, source=str(path))


def samples_from_rows(rows: Iterator[tuple[int, Any]], *, source: str) -> list[Sample]:
    samples: list[Sample] = []
    seen: dict[str, int] = {}
    for line, row in rows:
        where = f"{source}:{line}"
        if not isinstance(row, dict):
            raise SpecError(f"a row must be an object, got {type(row).__name__}", where=where)
        data = _fold_metadata(row, where)
        data.setdefault("id", f"row-{line}")
        try:
            sample = Sample.model_validate(data)
        except ValidationError as exc:
            raise SpecError.from_validation(exc, where=where) from None
        if sample.id in seen:
            raise SpecError(f"duplicate sample id {sample.id!r} (first on line {seen[sample.id]})", where=where)
        seen[sample.id] = line
        samples.append(sample)
    return samples


def _fold_metadata(row: dict[str, Any], where: str) -> dict[str, Any]:
    extra = {k: v for k, v in row.items() if k not in SAMPLE_FIELDS}
    if not extra:
        return row
    data = {k: v for k, v in row.items() if k in SAMPLE_FIELDS}
    meta = data.get("metadata") or {}
    if not isinstance(meta, dict):
        raise SpecError("metadata: must be an object", where=where)
    data["metadata"] = {**extra, **meta}
    return data


def _jsonl_rows(path: Path) -> Iterator[tuple[int, Any]]:
    with path.open("rb") as fh:
        for line_no, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                yield line_no, orjson.loads(line)
            except orjson.JSONDecodeError as exc:
                raise SpecError(f"invalid JSON: {exc}", where=f"{path}:{line_no}") from None


def _json_rows(path: Path) -> Iterator[tuple[int, Any]]:
    try:
        data = orjson.loads(path.read_bytes())
    except orjson.JSONDecodeError as exc:
        raise SpecError(f"invalid JSON: {exc}", where=str(path)) from None
    if not isinstance(data, list):
        raise SpecError("a .json dataset must be a list of rows", where=str(path))
    for i, row in enumerate(data):
        yield i + 1, row


def _csv_rows(path: Path) -> Iterator[tuple[int, Any]]:
    with path.open(newline="", encoding="utf-8-sig") as fh:
        reader = csv.DictReader(fh)
        if reader.fieldnames is None:
            return
        for row in reader:
            line = reader.line_num
            if None in row:
                raise SpecError(f"row has {len(row) - 1 + len(row[None])} cells but the header has "
                                f"{len(reader.fieldnames)}", where=f"{path}:{line}")
            data: dict[str, Any] = dict(row)
            meta = data.get("metadata")
            if meta:
                try:
                    data["metadata"] = orjson.loads(meta)
                except orjson.JSONDecodeError as exc:
                    raise SpecError(f"metadata: not a JSON object: {exc}", where=f"{path}:{line}") from None
            elif "metadata" in data:
                data["metadata"] = {}
            yield line, data
