"""An upload's rows written to its dataset version in batches, one batch being written while
the next is parsed.

Parsing is the server's work and writing is mostly the database's (PostgreSQL's ``COPY``,
SQLite's inserts release the GIL while they run), so a writer thread lets the two overlap:
the upload goes at the pace of the slower one, not of their sum. At most one batch is being
written and one filled, so memory stays at two batches whatever the upload's size. Each batch
is committed on its own (a long upload never holds SQLite's write lock), on one connection
kept for the whole upload (not one taken from the pool, and pinged, per batch), and ``close``
waits for the batch in flight, so a refused upload removes its rows only once nothing else
writes.

Each row's file line is kept only where it is not the line after its predecessor's (a blank
line, a CSV cell over several lines): a duplicate sample id found when PostgreSQL builds the
version's keys, at the end, is named by its lines like any other.
"""

from __future__ import annotations

from array import array
from bisect import bisect_right
from concurrent.futures import Future, ThreadPoolExecutor

from sqlalchemy import Connection
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from assay.core.errors import SpecError
from assay.runner.dataset import DUPLICATE_AT
from assay.service.metrics import Metrics
from assay.store import datasets as store
from assay.store.clean import storable
from assay.store.db import Database
from assay.store.models import SAMPLE_ID_MAX

BATCH = 5000
"""Rows written per statement and commit."""
MAX_LINE_MARKS = 1 << 20
"""Lines kept (16 bytes each) for rows not on the line after their predecessor's; past them a
duplicate found at the end is named by its row number."""


class RowBatches:
    """Rows waiting to be written, with the lines they came from (to name a duplicate)."""

    def __init__(self, database: Database, version_id: str, source: str, metrics: Metrics | None) -> None:
        self.database = database
        self.metrics = metrics
        self.version_id = version_id
        self.source = source
        self.count = 0
        self.rows: list[tuple[int, str, str]] = []
        self.lines: dict[str, int] = {}
        self._writer: ThreadPoolExecutor | None = None  # started by the first full batch
        self._pending: Future[None] | None = None
        self._connection: Connection | None = None
        self._session: Session | None = None
        self._mark_at, self._mark_line = array("q"), array("q")
        self._shift: int | None = None

    def add(self, line: int, sample_id: str, data: str) -> None:
        """Queue one row; SpecError for an id too long or seen before in the same batch (a
        duplicate of a row of an earlier batch is found by the database's unique key)."""
        if len(sample_id) > SAMPLE_ID_MAX:
            raise SpecError(f"id: {len(sample_id):,} characters, over the limit of {SAMPLE_ID_MAX}; shorten the "
                            "sample id", where=f"{self.source}:{line} (sample {short(sample_id)})")
        if "\x00" in sample_id:
            sample_id = storable(sample_id)
        if sample_id in self.lines:
            raise SpecError(DUPLICATE_AT(id=short(sample_id), first=f"{self.source}:{self.lines[sample_id]}"),
                            where=f"{self.source}:{line}")
        self.lines[sample_id] = line
        if line - self.count != self._shift and len(self._mark_at) < MAX_LINE_MARKS:
            self._shift = line - self.count
            self._mark_at.append(self.count)
            self._mark_line.append(line)
        self.rows.append((self.count, sample_id, data))
        self.count += 1
        if len(self.rows) >= BATCH:
            self.flush()

    def flush(self) -> None:
        """Hand the filled batch to the writer, once the batch before it is written (raising
        that one's error, if it had one)."""
        self._wait()
        if not self.rows:
            return
        if self._writer is None:
            self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="assay-upload-write")
        self._pending = self._writer.submit(self._write, self.rows, self.lines)
        self.rows, self.lines = [], {}

    def finish(self) -> None:
        """Write what is left (here: nothing else is left to parse) once every batch before
        it is committed."""
        self._wait()
        rows, lines, self.rows, self.lines = self.rows, self.lines, [], {}
        if rows:
            self._write(rows, lines)

    def close(self) -> None:
        """Wait for the batch in flight (its error, if any, is dropped: the caller is already
        failing) and stop the writer."""
        try:
            self._wait()
        except Exception:  # noqa: BLE001  the upload fails for its first reason
            pass
        if self._writer is not None:
            self._writer.shutdown(wait=True)
        if self._session is not None:
            self._session.close()
        if self._connection is not None:
            self._connection.close()

    def where(self, position: int) -> str:
        """The file line of the row at ``position`` (``source:line``), or its row number past
        ``MAX_LINE_MARKS``."""
        i = bisect_right(self._mark_at, position) - 1
        if i < 0 or (i == len(self._mark_at) - 1 and len(self._mark_at) == MAX_LINE_MARKS):
            return f"{self.source} (row {position + 1})"
        return f"{self.source}:{self._mark_line[i] + position - self._mark_at[i]}"

    def _wait(self) -> None:
        pending, self._pending = self._pending, None
        if pending is not None:
            pending.result()

    def _write(self, rows: list[tuple[int, str, str]], lines: dict[str, int]) -> None:
        session = self._writing()
        try:
            store.add_rows(session, self.version_id, rows)
            session.commit()
        except IntegrityError:
            session.rollback()
            seen = store.first_position(session, self.version_id, list(lines))
            session.rollback()
            for sample_id, line in lines.items():  # in the order they came
                if sample_id in seen:
                    raise SpecError(DUPLICATE_AT(id=short(sample_id), first=self.where(seen[sample_id])),
                                    where=f"{self.source}:{line}") from None
            raise
        except BaseException:
            session.rollback()
            raise
        if self.metrics is not None:
            self.metrics.dataset_rows.inc(len(rows))


    def _writing(self) -> Session:
        """The upload's one session, on a connection of its own (only ever used by one thread at
        a time: the writer, or the caller once the writer is idle)."""
        if self._session is None:
            self._connection = self.database.engine.connect()
            self._session = Session(bind=self._connection)
        return self._session


def short(text: str, limit: int = 60) -> str:
    return repr(text) if len(text) <= limit else repr(text[:limit]) + f"... ({len(text):,} characters)"
