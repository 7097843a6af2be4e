"""Scheduling stored spans after the intake has answered: a thread on every server takes the
arrivals (``store.online_intake``: the spans each export request stored new), reads their
spans, applies their owner's enabled rules (filter, sampling, scope: ``schedule.plan``) and
deletes the arrivals, all in one transaction. A server that dies midway leaves the arrivals in
place for the next planner; the jobs are unique per (rule, target, generation) besides.

Keeping this out of the request keeps an export's answer to decoding and one insert; the
spans not planned yet count in the intake's backlog, so a planner that falls behind slows
the exporters down (429) instead of letting arrivals pile up.

A user's enabled rules are kept for a second, and read again at once when any rule changed
(the rules' count and latest change, on any server) or this server changed one.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import defaultdict
from collections.abc import Callable
from datetime import datetime

from sqlalchemy.orm import Session

from assay.core.periodic import Periodic
from assay.service.online.otlp import SpanRecord
from assay.service.online.schedule import LiveRule, plan, record_of, sampled
from assay.store import online as rows
from assay.store import online_intake as arrivals
from assay.store.db import Database
from assay.store.models import utcnow
from assay.store.online_models import Scope
from assay.store.outage import DatabaseHealth, Pacing

log = logging.getLogger("assay.server.online")
CLAIM = 16
"""Arrivals (export requests) planned in one transaction."""
REFRESH_S = 1.0
Planned = list[tuple[list[LiveRule], list[SpanRecord]]]
"""Each user's enabled rules with the spans one of them samples."""


class Planner:
    def __init__(self, database: Database, poll_s: float, health: DatabaseHealth | None = None,
                 scheduled: Callable[[], None] = lambda: None) -> None:
        self.database = database
        self.scheduled = scheduled
        """Called after jobs were added (wakes the graders)."""
        pacing = Pacing(health or DatabaseHealth(), "online planning")
        self._poller = Periodic(self.run_once, poll_s, name="assay-online-planner", log=log,
                                failed="online planning failed; trying again", on_failure=pacing.failure,
                                on_success=pacing.success, again=True)
        self._started = False
        self._lock = threading.Lock()
        self._rules: dict[str, list[LiveRule]] = {}
        self._rules_mark: tuple[int, datetime | None] = (0, None)
        self._read_at = 0.0

    def start(self) -> None:
        self._started = True
        self._poller.start()

    def wake(self) -> None:
        self._poller.wake()

    def close(self) -> None:
        self._poller.close()

    def alive(self) -> bool:
        return not self._started or self._poller.alive()

    def forget_rules(self) -> None:
        """A rule changed in this process: read the rules again at the next arrival."""
        with self._lock:
            self._rules, self._read_at = {}, 0.0

    def run_once(self) -> int:
        """Plan up to ``CLAIM`` arrivals; returns how many were taken."""
        if self.database.is_sqlite:
            return self._run_once_sqlite()
        with self.database.session() as session:
            self._refresh(session)
            taken = arrivals.claim_arrivals(session, CLAIM)
            added = self._plan(session, self._read(session, taken))
        if added:
            self.scheduled()
        return len(taken)

    def _run_once_sqlite(self) -> int:
        """SQLite has one writer: the arrivals and their spans are read first, in a transaction of
        their own, and only the deletion of the arrivals and the jobs are written, briefly. (Taken
        at the start, the write lock was held through the reading and sampling, 50-140 ms a
        turn, and every export waited for it.) Arrivals another process took meanwhile make
        this turn give up, writing nothing."""
        with self.database.session() as session:
            self._refresh(session)
            peeked = arrivals.peek_arrivals(session, CLAIM)
            read = self._read(session, [(user_id, span_ids) for _, user_id, span_ids in peeked])
        if not peeked:
            return 0
        with self.database.session() as session:
            if not arrivals.delete_arrivals(session, [arrival_id for arrival_id, _, _ in peeked]):
                return 0
            added = self._plan(session, read)
        if added:
            self.scheduled()
        return len(peeked)

    def _read(self, session: Session, taken: list[tuple[str, list[int]]]) -> Planned:
        """Each user's enabled rules with the spans of ``taken`` that one of them samples."""
        by_user: dict[str, list[int]] = defaultdict(list)
        for user_id, span_ids in taken:
            by_user[user_id] += span_ids
        out = []
        for user_id, span_ids in by_user.items():
            rules = self._rules_of(session, user_id)
            wanted = _sampled(rules, arrivals.sampling_keys(session, span_ids)) if rules else []
            if wanted:
                out.append((rules, [record_of(span) for span in arrivals.spans_by_row_ids(session, wanted)]))
        return out

    @staticmethod
    def _plan(session: Session, read: Planned) -> int:
        now = utcnow()
        return sum(plan(session, rules, spans, now) for rules, spans in read)

    def _refresh(self, session: Session) -> None:
        if time.monotonic() - self._read_at < REFRESH_S:
            return
        mark = rows.rules_changed_at(session)
        with self._lock:
            if mark != self._rules_mark:
                self._rules_mark, self._rules = mark, {}
            self._read_at = time.monotonic()

    def _rules_of(self, session: Session, user_id: str) -> list[LiveRule]:
        with self._lock:
            rules = self._rules.get(user_id)
        if rules is None:
            rules = [LiveRule.of(rule) for rule in rows.enabled_rules(session, user_id)]
            with self._lock:
                self._rules[user_id] = rules
        return rules


def _sampled(rules: list[LiveRule], keys: list[tuple[int, str, str | None]]) -> list[int]:
    """The row ids of the spans some rule samples (by their trace or conversation id): the only
    ones ``plan`` looks at, so the others are never read whole."""
    out: list[int] = []
    for row_id, trace_id, conversation_id in keys:
        for rule in rules:
            key = conversation_id if rule.scope == Scope.CONVERSATION else trace_id
            if key and sampled(key, rule.sample_rate):
                out.append(row_id)
                break
    return out
