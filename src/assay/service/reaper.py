"""Removing the dataset versions whose upload stopped for good.

An upload writes a version's rows batch by batch, each in its own commit, and marks the version
ready at the end (``store.datasets``). A server killed mid-upload leaves a version that is not
ready, with the rows it had written: never listed nor graded, but kept forever. Every server
looks at the unfinished versions every ``every_s`` seconds and notes how far each one's rows
have come; a version whose rows have not moved for ``stale_s`` seconds is removed with its rows
(checked again under a row lock, so it is never one that became ready meanwhile). The uploads of
live servers write a batch every few thousand rows, so a version still moving is never touched,
and any number of servers may look at once: each judges what it saw itself, and the removal of a
version already gone is a no-op. An upload whose client stalls past ``stale_s`` loses its version
too, and is answered that its version was removed.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from assay.core.periodic import Periodic
from assay.store import datasets as dataset_rows
from assay.store.db import Database
from assay.store.outage import DatabaseHealth, Pacing

log = logging.getLogger("assay.server.reaper")

STALE_S = 900.0
"""How long an unfinished upload's rows may stand still before its version is removed."""


class UploadReaper:
    """Watches the unfinished dataset versions of ``database`` and removes the stalled ones."""

    def __init__(self, database: Database, *, stale_s: float = STALE_S, every_s: float = 60.0,
                 clock: Callable[[], float] = time.monotonic, health: DatabaseHealth | None = None) -> None:
        self.database = database
        self.stale_s = stale_s
        self.every_s = every_s
        self.clock = clock
        self._seen: dict[str, tuple[int, float]] = {}
        """version id -> (last position written, when this server first saw it there)"""
        pacing = Pacing(health or DatabaseHealth(), "the upload reaper")
        self._poller = Periodic(self.sweep, every_s, name="assay-upload-reaper", log=log,
                                failed="looking for stalled uploads failed", on_failure=pacing.failure,
                                on_success=pacing.success)

    def sweep(self) -> list[str]:
        """Look once: note how far each unfinished version has come, remove those that stood still
        for ``stale_s``; returns the ids removed."""
        now = self.clock()
        with self.database.session() as session:
            progress = dataset_rows.unready_versions(session)
        stalled = []
        for version_id, position in progress.items():
            before = self._seen.get(version_id)
            if before is None or before[0] != position:
                self._seen[version_id] = (position, now)
            elif now - before[1] >= self.stale_s:
                stalled.append(version_id)
        for version_id in set(self._seen) - set(progress):  # finished, or removed elsewhere
            del self._seen[version_id]
        removed = []
        for version_id in stalled:
            with self.database.session() as session:
                if dataset_rows.discard_unready(session, version_id):
                    removed.append(version_id)
            self._seen.pop(version_id, None)
            log.warning("removed dataset version %s: its upload stopped %.0f s ago", version_id, self.stale_s)
        return removed

    def start(self) -> None:
        self._poller.start()

    def alive(self) -> bool:
        """True while the reaper's thread runs."""
        return self._poller.alive()

    def close(self) -> None:
        self._poller.close()
