"""Connecting to the service's database: SQLite by default, PostgreSQL (psycopg 3) when the
URL says so. One ``Database`` per process holds the engine and hands out sessions."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError
from sqlalchemy.orm import Session, sessionmaker

from assay.core.errors import AssayError

_SQLITE_BUSY_MS = 30_000
"""How long a SQLite writer waits for another (the run worker and the API write concurrently)."""


def normalise_url(url: str) -> str:
    """``url`` with the driver assay uses: ``postgresql://`` and ``postgres://`` mean psycopg 3.

    Raises AssayError for a URL SQLAlchemy cannot read or a database assay does not support."""
    if url.startswith("postgres://"):
        url = "postgresql://" + url.removeprefix("postgres://")
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise AssayError(f"database URL {redact(url)!r} cannot be read: use sqlite:///path/to/assay.db or "
                         "postgresql://user:password@host:port/database") from None
    if parsed.get_backend_name() == "postgresql":
        parsed = parsed.set(drivername="postgresql+psycopg")
    elif parsed.get_backend_name() != "sqlite":
        raise AssayError(f"database {parsed.get_backend_name()!r} is not supported: use SQLite or PostgreSQL")
    return parsed.render_as_string(hide_password=False)


def redact(url: str) -> str:
    """``url`` with its password hidden, for messages and logs."""
    try:
        return make_url(url).render_as_string(hide_password=True)
    except ArgumentError:
        return "<unreadable URL>"


class Database:
    """The engine and session factory for one database URL."""

    def __init__(self, url: str, **engine_options: Any) -> None:
        self.url = normalise_url(url)
        self.engine: Engine = _engine(self.url, **engine_options)
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)

    @property
    def is_sqlite(self) -> bool:
        return self.engine.dialect.name == "sqlite"

    @contextmanager
    def session(self) -> Iterator[Session]:
        """A session committed when the block ends normally and rolled back otherwise."""
        with self._sessions() as session:
            try:
                yield session
                session.commit()
            except BaseException:
                session.rollback()
                raise

    def dispose(self) -> None:
        self.engine.dispose()


def _engine(url: str, **options: Any) -> Engine:
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        options.setdefault("pool_pre_ping", True)
        return create_engine(url, **options)
    if parsed.database and parsed.database != ":memory:":
        Path(parsed.database).expanduser().parent.mkdir(parents=True, exist_ok=True)
    connect_args = {"check_same_thread": False, "timeout": _SQLITE_BUSY_MS / 1000}
    engine = create_engine(url, connect_args=connect_args, **options)

    @event.listens_for(engine, "connect")
    def _pragmas(dbapi_connection: Any, _record: Any) -> None:
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys=ON")  # SQLite enforces ON DELETE only when asked
        cursor.execute("PRAGMA journal_mode=WAL")  # readers do not block the run worker's writes
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute(f"PRAGMA busy_timeout={_SQLITE_BUSY_MS}")
        cursor.close()

    return engine
