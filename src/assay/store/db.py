"""Connecting to the service's database: SQLite by default, PostgreSQL (psycopg 3) when the
URL says so. One ``Database`` per process holds the engine and hands out sessions."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import make_url
from sqlalchemy.exc import ArgumentError
from sqlalchemy.orm import Session, sessionmaker

from assay.core.errors import AssayError

SQLITE_BUSY_MS = 30_000
"""How long a SQLite writer waits for another (the run worker and the API write concurrently)
unless told otherwise; past it the database counts as locked (``store.outage``)."""
CONNECT_TIMEOUT_S = 5
"""How long opening a PostgreSQL connection may take: a database host that does not answer is
an outage within this, not a thread stuck for the kernel's TCP timeout."""


@dataclass(frozen=True, slots=True)
class PoolLimits:
    """How many connections one engine keeps (``size``), may open more at a peak (``overflow``),
    and how long a caller waits for one before ``sqlalchemy.exc.TimeoutError`` (``wait_s``)."""

    size: int = 5
    overflow: int = 10
    wait_s: float = 30.0


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
    """The engine and session factory for one database URL: its pool as ``pool`` says
    (SQLAlchemy's defaults when None), a SQLite writer waiting ``busy_ms`` for another."""

    def __init__(self, url: str, *, pool: PoolLimits | None = None, busy_ms: int = SQLITE_BUSY_MS,
                 **engine_options: Any) -> None:
        self.url = normalise_url(url)
        self.pool = pool
        if pool is not None and not _in_memory(self.url):
            engine_options.update(pool_size=pool.size, max_overflow=pool.overflow, pool_timeout=pool.wait_s)
        self.engine: Engine = _engine(self.url, busy_ms, **engine_options)
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


def _in_memory(url: str) -> bool:
    parsed = make_url(url)
    return parsed.get_backend_name() == "sqlite" and parsed.database in (None, "", ":memory:")


def dialect_insert(session: Session, table: Any) -> Any:
    """An ``INSERT`` of ``table`` in the session's dialect (PostgreSQL's or SQLite's), which both
    offer ``on_conflict_do_nothing``."""
    from sqlalchemy.dialects import postgresql, sqlite

    return postgresql.insert(table) if session.get_bind().dialect.name == "postgresql" else sqlite.insert(table)


def json_loads(text: str | bytes) -> Any:
    """A JSON column's text as a value: orjson (several times the standard library's speed: a
    comparison reads thousands of reasons' arguments), the standard library for what orjson
    refuses and was stored anyway (an integer beyond 64 bits, kept exact)."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text)


def json_dumps(value: Any) -> str:
    """A value as JSON text for a writer that bypasses the columns' types (``COPY``, arrays):
    orjson, the standard library for what orjson refuses (an integer beyond 64 bits, a key that
    is not a string), as SQLAlchemy would write it."""
    try:
        return orjson.dumps(value).decode()
    except orjson.JSONEncodeError:
        return json.dumps(value)


def _engine(url: str, busy_ms: int, **options: Any) -> Engine:
    options.setdefault("json_deserializer", json_loads)
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite":
        options.setdefault("pool_pre_ping", True)  # a connection from before a restart is replaced, not used
        options.setdefault("connect_args", {"connect_timeout": CONNECT_TIMEOUT_S})
        return create_engine(url, **options)
    if parsed.database and parsed.database != ":memory:":
        Path(parsed.database).expanduser().parent.mkdir(parents=True, exist_ok=True)
    connect_args = {"check_same_thread": False, "timeout": busy_ms / 1000}
    engine = create_engine(url, connect_args=connect_args, **options)

    @event.listens_for(engine, "connect")
    def _pragmas(dbapi_connection: Any, _record: Any) -> None:
        cursor = dbapi_connection.cursor()
        cursor.execute("PRAGMA foreign_keys=ON")  # SQLite enforces ON DELETE only when asked
        cursor.execute("PRAGMA journal_mode=WAL")  # readers do not block the run worker's writes
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute(f"PRAGMA busy_timeout={int(busy_ms)}")
        cursor.close()

    return engine
