"""Datasets arriving over the API, inline rows or an uploaded file, read by the engine's
hardened dataset readers and streamed into a new dataset version in batches.

Nothing holds the whole upload: rows are parsed as the body arrives and written in batches
(``service.row_batches``: each committed on its own, one written while the next is parsed).
A version is marked ready only after its last row; a failed upload's rows are removed.
Every limit is checked here, as each row arrives, with the same numbers on SQLite and
PostgreSQL: a refused row is a 422 naming the file's line and the field, never a failed run.

A sample from an API caller may not name a ``workspace``: that is a folder of the server's,
which file graders would read.
"""

from __future__ import annotations

import json
import re
import tempfile
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Protocol, cast

import orjson
from pydantic_core import to_jsonable_python
from sqlalchemy.exc import IntegrityError

from assay.core.errors import SpecError
from assay.core.messages import Phrase
from assay.core.sample import Sample
from assay.core.untrusted import clean_json
from assay.runner.dataset import DUPLICATE_AT, FORMATS, iter_samples, read_rows
from assay.service.metrics import Metrics
from assay.service.row_batches import RowBatches, short
from assay.settings import Settings
from assay.store import datasets as store
from assay.store.clean import storable
from assay.store.db import Database
from assay.store.models import DatasetVersion
from assay.store.row_tables import DuplicateSample

MAX_NAME = 300
"""The longest file name kept (the column's width)."""
MAX_COLUMNS = 200
"""Column names kept per version (a JSONL file may give every row other keys)."""
MAX_SHAPES = 1024
"""Row shapes (key tuples) remembered per upload: rows of many shapes are looked at one by one."""
JSON_MAX_BYTES = 32 << 20
"""A ``.json`` file is parsed whole: larger ones are refused (JSONL streams)."""
JSON_TOO_LARGE = Phrase("dataset.json_too_large", "a .json dataset is read whole and may be at most {mib} MiB; "
                                                  "upload larger datasets as JSONL (one row per line), CSV or Parquet")
TOO_MANY_ROWS = Phrase("dataset.too_many_rows", "more than {rows} rows: split the dataset (the server's "
                                                "ASSAY_DATASET_MAX_ROWS)")
ROW_TOO_LARGE = Phrase("dataset.row_too_large", "the row is {size} bytes stored, over the limit of {limit} "
                                                "(the server's ASSAY_DATASET_MAX_ROW_BYTES)")
_STORED = ("input", "output", "expected")
_PLAIN_KEYS = frozenset(("id", *_STORED))


@dataclass(frozen=True)
class Limits:
    """What one version may hold; the same on every database."""

    max_rows: int
    max_row_bytes: int


def upload_name(filename: str | None, limit: int = MAX_NAME) -> str:
    """The name an uploaded file is known by: its last path component (a client may send
    ``../../etc/passwd.jsonl`` or ``C:\\data\\x.csv``), without control characters, at most
    ``limit`` characters with its suffix kept. Nothing is ever written under this name."""
    base = re.split(r"[/\\]", filename or "")[-1]
    base = "".join(ch for ch in base if ch.isprintable()).strip()
    if len(base) > limit:
        suffix = Path(base).suffix[:16]
        base = base[:limit - len(suffix)] + suffix
    return base


def file_format(filename: str) -> str:
    """``jsonl``, ``json``, ``csv`` or ``parquet`` from the name's suffix; SpecError otherwise."""
    fmt = FORMATS.get(Path(filename).suffix.lower())
    if fmt is None:
        raise SpecError(f"cannot tell the format of {filename!r}: name the file .jsonl, .ndjson, .json, .csv, "
                        ".tsv or .parquet", path="file")
    return fmt


class ByteStream(Protocol):
    """What an upload is read from: a file, or a request body (``server.body_stream``)."""

    def read(self, size: int = -1, /) -> bytes: ...


def ingest_upload(database: Database, dataset_id: str, filename: str, stream: ByteStream, *, limits: Limits,
                  created_by_id: str | None, metrics: Metrics | None = None,
                  rename: dict[str, str] | None = None) -> DatasetVersion:
    """A new version of the dataset from an uploaded file, read from ``stream`` as it comes; a
    CSV file's columns named in ``rename`` read as the fields it gives (``{"问题": "input"}``)."""
    fmt = file_format(filename)
    source = Path(filename)
    if fmt == "parquet":  # its index is at its end: spooled to disk first, decoded by a capped child
        with tempfile.TemporaryFile(prefix="assay-upload-") as spool:
            while chunk := stream.read(1 << 20):
                spool.write(chunk)
            spool.seek(0)
            decoded = read_rows(spool, source, untrusted=True, max_row_bytes=limits.max_row_bytes)
            return _ingest(database, dataset_id, filename, fmt, decoded, limits=limits,
                           created_by_id=created_by_id, clean=True, metrics=metrics)
    if fmt == "json":
        stream = _Capped(stream, JSON_MAX_BYTES, filename)
    found: list[str] = []  # a CSV file's encoding, told before its first row
    # The text readers only ever call read(n): any ByteStream does for their BinaryIO.
    rows = read_rows(cast(BinaryIO, stream), source, on_encoding=found.append, rename=rename)
    return _ingest(database, dataset_id, filename, fmt, rows, limits=limits, created_by_id=created_by_id,
                   clean=False, metrics=metrics, encoding=found)


def ingest_inline(database: Database, dataset_id: str, name: str | None, rows: list[dict[str, Any]], *,
                  limits: Limits, created_by_id: str | None, source: str = "dataset.rows",
                  metrics: Metrics | None = None) -> DatasetVersion:
    """A new version of the dataset from the rows of a request (``source`` names them in errors)."""
    return _ingest(database, dataset_id, name, "inline", enumerate(rows, 1), limits=limits,
                   created_by_id=created_by_id, clean=True, source=source, metrics=metrics)


def _ingest(database: Database, dataset_id: str, name: str | None, fmt: str, rows: Iterable[tuple[int, Any]], *,
            limits: Limits, created_by_id: str | None, clean: bool, source: str | None = None,
            metrics: Metrics | None = None, encoding: list[str] | None = None) -> DatasetVersion:
    started = time.perf_counter()
    source = source or name or "upload"
    version = _begin(database, dataset_id, name, fmt, created_by_id)
    try:
        columns: dict[str, None] = {}
        batch = RowBatches(database, version.id, source, metrics)
        size = 0
        max_rows, max_row_bytes, add = limits.max_rows, limits.max_row_bytes, batch.add
        try:
            # The per-row work here bounds the upload's rate: messages are built only on a refusal.
            for line, sample_id, data in _stored_rows(rows, source, clean, columns):
                if batch.count >= max_rows:
                    raise SpecError(TOO_MANY_ROWS(rows=f"{limits.max_rows:,}"), where=f"{source}:{line}")
                if len(data) > max_row_bytes:
                    raise SpecError(ROW_TOO_LARGE(size=f"{len(data):,}", limit=f"{limits.max_row_bytes:,}"),
                                    where=f"{source}:{line} (sample {short(sample_id)})")
                size += len(data)
                add(line, sample_id, data.decode("utf-8"))
            batch.finish()
        finally:
            batch.close()  # nothing writes any more when a refused upload's rows are removed
        try:
            with database.session() as session:
                store.finish_version(session, version.id, row_count=batch.count, size_bytes=size,
                                     columns=list(columns)[:MAX_COLUMNS], encoding=encoding[0] if encoding else None)
        except DuplicateSample as twice:  # PostgreSQL: found as the version's keys were built
            raise SpecError(DUPLICATE_AT(id=short(twice.sample_id), first=batch.where(twice.first)),
                            where=batch.where(twice.again)) from None
    except BaseException as exc:
        with database.session() as session:
            store.discard_version(session, version.id)
        if metrics is not None:
            metrics.upload_ended(refused=isinstance(exc, SpecError))
        raise
    if metrics is not None:
        metrics.uploaded(batch.count, time.perf_counter() - started, size)
    with database.session() as session:
        done = store.version_by_id(session, version.id)
    assert done is not None
    return done


def _begin(database: Database, dataset_id: str, name: str | None, fmt: str,
           created_by_id: str | None) -> DatasetVersion:
    for attempt in range(5):  # another upload of the dataset took the number: take the next
        try:
            with database.session() as session:
                return store.begin_version(session, dataset_id, source_name=storable(name), format=fmt,
                                           created_by_id=created_by_id)
        except IntegrityError:
            if attempt == 4:
                raise
    raise AssertionError("unreachable")


def _stored_rows(rows: Iterable[tuple[int, Any]], source: str, clean: bool,
                 columns: dict[str, None]) -> Iterator[tuple[int, str, bytes]]:
    """``(line, sample id, stored JSON)`` of each row, validated as a ``Sample``, noting the
    first ``MAX_COLUMNS`` column names seen in ``columns``.

    A row of text fields only (``id`` and any of ``input``, ``output``, ``expected`` as strings,
    the usual dataset) is valid as it is and is stored as given, without building the model: the
    same JSON, at a fraction of the cost. (``clean`` rows qualify when their text is ASCII:
    nothing to clean.) Its keys are looked at once per shape (the keys as a tuple, the first
    ``MAX_SHAPES`` of them kept), its values in one join, which only text values pass."""
    shapes: dict[tuple[Any, ...], bool] = {}
    for line, row in rows:
        if type(row) is dict:
            shape = tuple(row)
            plain = shapes.get(shape)
            if plain is None:
                plain = _note_shape(shape, columns)
                if len(shapes) < MAX_SHAPES:
                    shapes[shape] = plain
            if plain:
                try:
                    text = "".join(row.values())
                except TypeError:  # a value that is not text: the model decides
                    pass
                else:
                    if row["id"] and (not clean or text.isascii()):
                        yield line, row["id"], orjson.dumps(row)
                        continue
        for _, sample in iter_samples(((line, row),), source=source, clean=clean):
            yield line, sample.id, _stored_json(sample, source, line)


def _note_shape(shape: tuple[Any, ...], columns: dict[str, None]) -> bool:
    """Note a row shape's keys in ``columns`` (up to ``MAX_COLUMNS``); whether rows of this
    shape may be plain (an ``id`` and no key but the plain ones)."""
    columns.update((str(k), None) for k in shape if len(columns) < MAX_COLUMNS)
    return "id" in shape and _PLAIN_KEYS.issuperset(shape)


def _stored_json(sample: Sample, source: str, line: int) -> bytes:
    """The row a version stores for ``sample``, as JSON: what was given, normalised."""
    if sample.workspace is not None:
        raise SpecError("workspace: not accepted over the API (it names a folder on the server)",
                        where=f"{source}:{line} (sample {short(sample.id)})")
    out: dict[str, Any] = {"id": sample.id}
    for field in _STORED:
        value = getattr(sample, field)
        if value is not None:
            out[field] = value
    if sample.metadata:
        out["metadata"] = sample.metadata
    if sample.transcript:
        out["transcript"] = [e.model_dump(mode="json", exclude_none=True) for e in sample.transcript]
    if sample.outcome is not None:
        out["outcome"] = sample.outcome
    if sample.duration_ms is not None:
        out["duration_ms"] = sample.duration_ms
    try:
        return orjson.dumps(out, default=to_jsonable_python)
    except orjson.JSONEncodeError:  # an integer beyond 64 bits: kept as its exact text
        return json.dumps(clean_json(to_jsonable_python(out)), ensure_ascii=False,
                          separators=(",", ":")).encode("utf-8")


class _Capped:
    """A stream that refuses to be read past ``limit`` bytes (a ``.json`` file is parsed whole)."""

    def __init__(self, stream: ByteStream, limit: int, name: str) -> None:
        self.stream = stream
        self.limit = limit
        self.name = name

    def read(self, size: int = -1) -> bytes:
        if size >= 0:
            return self.stream.read(size)
        parts, total = [], 0
        while chunk := self.stream.read(1 << 20):
            parts.append(chunk)
            total += len(chunk)
            if total > self.limit:
                raise SpecError(JSON_TOO_LARGE(mib=self.limit >> 20), where=self.name)
        return b"".join(parts)


def limits_of(settings: Settings) -> Limits:
    return Limits(max_rows=settings.dataset_max_rows, max_row_bytes=settings.dataset_max_row_bytes)


def new_dataset(database: Database, *, name: str, description: str | None, created_by_id: str | None) -> str:
    """A dataset without versions yet, committed (its versions' batches refer to it); its id."""
    with database.session() as session:
        return store.create_dataset(session, name=storable(name), description=storable(description),
                                    created_by_id=created_by_id).id


def forget_dataset(database: Database, dataset_id: str) -> None:
    """Remove a dataset made for an upload that was refused."""
    with database.session() as session:
        dataset = store.get_dataset(session, dataset_id)
        if dataset is not None:
            store.delete_dataset(session, dataset)


def copy_dataset(database: Database, source_id: str, *, name: str, created_by_id: str | None, limits: Limits,
                 metrics: Metrics | None = None) -> str:
    """A new dataset of ``created_by_id``'s ("Copy as mine") holding the source's newest version
    as its version 1: the rows streamed from one to the other and checked as an upload's are,
    never held whole. Its id; LookupError when the source is gone."""
    with database.session() as session:
        source = store.get_dataset(session, source_id)
        if source is None:
            raise LookupError(source_id)
        latest = store.latest_version(session, source_id)
        description = source.description
        version = (latest.id, latest.source_name, latest.format) if latest is not None else None
    dataset_id = new_dataset(database, name=name, description=description, created_by_id=created_by_id)
    if version is None:
        return dataset_id
    try:
        _ingest(database, dataset_id, version[1], version[2], _rows_of(database, version[0]), limits=limits,
                created_by_id=created_by_id, clean=True, source=version[1] or name, metrics=metrics)
    except BaseException:
        forget_dataset(database, dataset_id)
        raise
    return dataset_id


def _rows_of(database: Database, version_id: str) -> Iterator[tuple[int, Any]]:
    with database.session() as session:
        for position, row in store.iter_rows(session, version_id):
            yield position + 1, row
