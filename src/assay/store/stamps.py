"""Change stamps: tiny files beside the database that every process of one machine can watch,
so a change committed by one process (or by the command line) is seen by the others at the
cost of one ``stat``. ``evaluators`` grows when an evaluator changes (servers drop the graders
they keep); ``tokens`` grows when a token is revoked (servers drop the answers they keep, so
a revoked token stops working at once rather than when a cached answer expires).

The files sit beside a SQLite database file, as SQLite's own ``-wal`` and ``-shm`` do
(``assay.db-evaluators.stamp``), and in ``$TMPDIR`` for a PostgreSQL one
(``assay-<hash of the URL>-evaluators.stamp``). An in-memory SQLite database is private to its
process: its stamps never move.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
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


class ChangeStamp:
    """A counter of changes to ``topic`` that every process of the database sees."""

    def __init__(self, prefix: str | None, topic: str = "evaluators") -> None:
        self.path = None if prefix is None else Path(f"{prefix}-{topic}.stamp")

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
