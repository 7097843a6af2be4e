"""Change counters in the database: how a change committed by one server (or by the command
line) reaches every other server of the database, on any host, with nothing shared but the
database URL.

``evaluators`` grows when an evaluator changes (servers drop the graders they keep); ``tokens``
grows when a token is revoked (servers drop the answers they keep). A server reads every
counter once per poll (``Changes``, on one background thread) and its caches compare the
counter they last saw with the one in memory, which costs no query per request: a change is
seen everywhere within one poll interval.
"""

from __future__ import annotations

import logging

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from assay.core.periodic import Periodic
from assay.store.db import Database
from assay.store.models import ChangeCounter
from assay.store.outage import DatabaseHealth, Pacing

TOPICS = ("evaluators", "tokens")
log = logging.getLogger("assay.store.changes")


def bump(session: Session, topic: str) -> None:
    """Count a change of ``topic`` in the caller's transaction, so that it is seen exactly when
    the change itself is committed."""
    session.execute(update(ChangeCounter).where(ChangeCounter.topic == topic)
                    .values(counter=ChangeCounter.counter + 1))


def read_all(session: Session) -> dict[str, int]:
    return {topic: int(counter) for topic, counter in session.execute(select(ChangeCounter.topic,
                                                                            ChangeCounter.counter))}


class ChangeStamp:
    """One topic's counter as this process last saw it; ``read`` costs no query."""

    def __init__(self, changes: Changes | None, topic: str) -> None:
        self.changes = changes
        self.topic = topic

    def read(self) -> int:
        return 0 if self.changes is None else self.changes.seen.get(self.topic, 0)

    def bump(self) -> None:
        """Count a change (in its own transaction) and see it here at once."""
        if self.changes is not None:
            with self.changes.database.session() as session:
                bump(session, self.topic)
            self.changes.refresh()


class Changes:
    """The change counters of one database, read every ``poll_s`` on a background thread."""

    def __init__(self, database: Database, poll_s: float = 1.0, health: DatabaseHealth | None = None) -> None:
        self.database = database
        self.poll_s = poll_s
        self.seen: dict[str, int] = {}
        pacing = Pacing(health or DatabaseHealth(), "the change poller")
        self._poller = Periodic(self.refresh, poll_s, name="assay-changes", log=log,
                                failed="reading the change counters failed", on_failure=pacing.failure,
                                on_success=pacing.success)

    def alive(self) -> bool:
        """True while the poller's thread runs."""
        return self._poller.alive()

    def stamp(self, topic: str) -> ChangeStamp:
        return ChangeStamp(self, topic)

    def refresh(self) -> None:
        with self.database.session() as session:
            self.seen = read_all(session)

    def start(self) -> None:
        """Read the counters now (the schema is up to date) and then every ``poll_s``."""
        self.refresh()
        self._poller.start()

    def close(self) -> None:
        self._poller.close()
