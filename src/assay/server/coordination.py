"""What the processes serving one database on one machine (``assay serve --workers N``, or
several servers) share, through two small files named after the database:

- ``RunLease``: an exclusive lock; the process holding it is the one that grades background
  runs and resumes interrupted ones. The kernel releases it when that process exits or dies,
  and another process takes it over at its next poll.
- ``ChangeStamp`` (``assay.store.stamps``): a file that grows by a byte whenever an evaluator
  changes or a token is revoked, so every process drops the graders or the token answers it
  keeps in memory, at the cost of one ``stat`` per use.

Both sit beside a SQLite database file, as SQLite's own ``-wal`` and ``-shm`` do
(``assay.db-runs.lock``, ``assay.db-evaluators.stamp``), and in ``$TMPDIR`` for a PostgreSQL
one (``assay-<hash of the URL>-runs.lock``). An in-memory SQLite database is private to its
process: it gets neither (``RunLease`` is always held, ``ChangeStamp`` never moves).
"""

from __future__ import annotations

import fcntl
import os
import threading
from pathlib import Path

from assay.store.stamps import ChangeStamp, state_prefix

__all__ = ["ChangeStamp", "RunLease", "state_prefix"]


class RunLease:
    """The right to grade this database's background runs, held by one process at a time."""

    def __init__(self, prefix: str | None) -> None:
        self.path = None if prefix is None else Path(prefix + "-runs.lock")
        self._fd: int | None = None
        self._lock = threading.Lock()

    @property
    def held(self) -> bool:
        return self.path is None or self._fd is not None

    def acquire(self) -> bool:
        """Take the lease if no other process holds it (never waits); True when held."""
        with self._lock:
            if self.held:
                return True
            assert self.path is not None
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                os.close(fd)
                return False
            self._fd = fd
            return True

    def release(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)  # closing the descriptor releases the lock
                self._fd = None
