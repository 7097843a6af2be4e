"""Spans in: an OTLP export request decoded, stored idempotently and scheduled by its owner's
rules, in one transaction (a batch sent again stores nothing and schedules nothing).

The grading backlog (jobs not graded yet, on every server of the database) is read at most once
a second; past ``online_max_backlog`` the intake refuses new batches (429 with ``Retry-After``)
rather than queue without bound. A user's enabled rules are kept for a second too, and read
again at once when any rule changed (the rules' count and latest change, read with the backlog).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from datetime import datetime

from assay.service.online.otlp import Caps, Decoded, decode
from assay.service.online.schedule import LiveRule, plan
from assay.settings import Settings
from assay.store import online as rows
from assay.store.db import Database
from assay.store.models import utcnow

REFRESH_S = 1.0


@dataclass(frozen=True, slots=True)
class IntakeOutcome:
    accepted: int
    """Spans in the request that are stored now (new or stored before)."""
    stored: int
    """Spans new to the database."""
    rejected: int
    problems: list[str]
    scheduled: int


class Intake:
    """This server's door for spans."""

    def __init__(self, database: Database, settings: Settings) -> None:
        self.database = database
        self.max_backlog = settings.online_max_backlog
        self.caps = Caps(max_value_chars=settings.otlp_max_attribute_chars)
        self._lock = threading.Lock()
        self._read_at = 0.0
        self._backlog = 0
        self._rules_mark: tuple[int, datetime | None] = (0, None)
        self._rules: dict[str, list[LiveRule]] = {}

    def decode(self, body: bytes, content_type: str) -> Decoded:
        """Raises ``OtlpError`` for a malformed request."""
        return decode(body, content_type, self.caps)

    def full(self) -> bool:
        """Whether the grading backlog is past its limit (read at most once a second)."""
        self._refresh()
        return self._backlog >= self.max_backlog

    def _refresh(self) -> None:
        if time.monotonic() - self._read_at < REFRESH_S:
            return
        with self._lock:
            if time.monotonic() - self._read_at < REFRESH_S:
                return
            with self.database.session() as session:
                self._backlog = rows.backlog(session)
                mark = rows.rules_changed_at(session)
            if mark != self._rules_mark:
                self._rules_mark, self._rules = mark, {}
            self._read_at = time.monotonic()

    def forget_rules(self) -> None:
        """A rule changed in this process: read the rules again at the next batch."""
        with self._lock:
            self._rules, self._read_at = {}, 0.0

    def _rules_of(self, user_id: str) -> list[LiveRule] | None:
        with self._lock:
            return self._rules.get(user_id)

    def ingest(self, user_id: str, decoded: Decoded) -> IntakeOutcome:
        """Store the decoded spans for ``user_id`` and schedule what its rules grade."""
        self._refresh()
        rules = self._rules_of(user_id)
        with self.database.session() as session:
            if rules is None:
                rules = [LiveRule.of(rule) for rule in rows.enabled_rules(session, user_id)]
                with self._lock:
                    self._rules[user_id] = rules
            inserted = rows.insert_spans(session, user_id, decoded.spans)
            new = [s for s in decoded.spans if (s.trace_id, s.span_id) in inserted]
            scheduled = plan(session, rules, new, utcnow()) if new and rules else 0
        return IntakeOutcome(len(decoded.spans), len(inserted), decoded.rejected, decoded.problems, scheduled)
