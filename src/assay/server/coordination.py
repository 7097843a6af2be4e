"""What the processes serving one database on one machine (``assay serve --workers N``, or
several servers) share, through two small files named after the database:

- ``RunLease``: an exclusive lock; the process holding it is the one that grades background
  runs and resumes interrupted ones. The kernel releases it when that process exits or dies,
  and another process takes it over at its next poll.
- ``ChangeStamp``: a file that grows by a byte whenever an evaluator changes, so every process
  drops the graders it keeps in memory, at the cost of one ``stat`` per use.

Both sit beside a SQLite database file, as SQLite's own ``-wal`` and ``-shm`` do
(``assay.db-runs.lock``, ``assay.db-evaluators.stamp``), and in ``$TMPDIR`` for a PostgreSQL
one (``assay-<hash of the URL>-runs.lock``). An in-memory SQLite database is private to its
process: it gets neither (``RunLease`` is always held, ``ChangeStamp`` never moves).
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import tempfile
import threading
from pathlib import Path

from sqlalchemy.engine import make_url


def state_prefix(database_url: str) -> str | None:
    """The start of the shared files' paths for ``database_url``; None for an in-memory database."""
    url = make_url(database_url)
    if url.get_backend_name() == "sqlite":
        if not url.database or url.database == ":memory:":
            return None
        return str(Path(url.database).expanduser().resolve())
    identity = url.set(drivername=url.get_backend_name()).render_as_string(hide_password=False)
    return str(Path(tempfile.gettempdir()) / f"assay-{hashlib.sha256(identity.encode()).hexdigest()[:16]}")


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


class ChangeStamp:
    """A counter of evaluator changes that every process of the database sees."""

    def __init__(self, prefix: str | None) -> None:
        self.path = None if prefix is None else Path(prefix + "-evaluators.stamp")

    def read(self) -> int:
        if self.path is None:
            return 0
        try:
            return os.stat(self.path).st_size
        except FileNotFoundError:
            return 0

    def bump(self) -> None:
        if self.path is None:
            return
        with open(self.path, "ab") as stamp:  # O_APPEND: concurrent bumps each add their byte
            stamp.write(b".")
