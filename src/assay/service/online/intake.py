"""Spans in: an OTLP export request decoded and stored idempotently, with the ids of the spans
new in it handed to the planner (``planner``), in one transaction. That is all an export
waits for: the rules look at the spans after the answer (a batch sent again stores nothing,
so it is planned nothing).

The backlog (jobs not graded yet, and spans not planned yet, on every server of the database)
is read at most once a second; past ``online_max_backlog`` the intake refuses new batches (429
with ``Retry-After``) rather than queue without bound.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from assay.core.errors import AssayError
from assay.service.online.otlp import Caps, decode
from assay.settings import Settings
from assay.store import online as rows
from assay.store import online_intake as arrivals
from assay.store.db import Database

REFRESH_S = 1.0


class Backlogged(AssayError):
    """The backlog is past its limit (429 with ``Retry-After``)."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"the backlog is past {limit:,}")
        self.limit = limit


@dataclass(frozen=True, slots=True)
class IntakeOutcome:
    accepted: int
    """Spans in the request that are stored now (new or stored before)."""
    stored: int
    """Spans new to the database (handed to the planner)."""
    rejected: int
    problems: list[str]


class Intake:
    """This server's door for spans."""

    def __init__(self, database: Database, settings: Settings) -> None:
        self.database = database
        self.max_backlog = settings.online_max_backlog
        self.caps = Caps(max_value_chars=settings.otlp_max_attribute_chars)
        self._lock = threading.Lock()
        self._read_at = 0.0
        self._backlog = 0

    def full(self) -> bool:
        """Whether the backlog is past its limit (read at most once a second)."""
        if time.monotonic() - self._read_at >= REFRESH_S:
            with self._lock:
                if time.monotonic() - self._read_at >= REFRESH_S:
                    with self.database.session() as session:
                        self._backlog = rows.backlog(session) + arrivals.unplanned(session)
                    self._read_at = time.monotonic()
        return self._backlog >= self.max_backlog

    def accept(self, user_id: str, body: bytes, content_type: str) -> IntakeOutcome:
        """Decode a request and store its spans for ``user_id``, handing the new ones to the
        planner (one hop off the event loop for all of it). Raises ``Backlogged`` past the
        backlog's limit, ``OtlpError`` for a malformed request."""
        if self.full():
            raise Backlogged(self.max_backlog)
        decoded = decode(body, content_type, self.caps)
        with self.database.session() as session:
            new = arrivals.insert_spans(session, user_id, decoded.spans)
            arrivals.add_arrival(session, user_id, new)
        return IntakeOutcome(len(decoded.spans), len(new), decoded.rejected, decoded.problems)
