"""``store.outage``: real database errors told apart (an outage, or a statement refused), pauses
that grow, are jittered and bounded, and an outage logged once however many threads and retries
meet it, lasting while any thread's last call failed."""

from __future__ import annotations

import logging
import socket
import sqlite3
import threading
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError

from assay.store.db import Database
from assay.store.outage import Backoff, DatabaseHealth, is_outage


def error_of(database: Database, statement: str) -> Exception:
    try:
        with database.session() as session:
            session.execute(text(statement))
    except Exception as error:  # noqa: BLE001  the error is the point
        return error
    raise AssertionError(f"{statement} did not fail")


def test_a_locked_sqlite_is_an_outage_and_a_refused_statement_is_not(tmp_path: Path):
    path = tmp_path / "a.db"
    database = Database(f"sqlite:///{path}", busy_ms=50)
    with database.session() as session:
        session.execute(text("CREATE TABLE t (id INTEGER PRIMARY KEY)"))
        session.execute(text("INSERT INTO t VALUES (1)"))
    locker = sqlite3.connect(path, isolation_level=None)
    locker.execute("BEGIN EXCLUSIVE")
    try:
        assert is_outage(error_of(database, "INSERT INTO t VALUES (2)"))
    finally:
        locker.execute("COMMIT")
        locker.close()
    duplicate = error_of(database, "INSERT INTO t VALUES (1)")
    assert isinstance(duplicate, IntegrityError) and not is_outage(duplicate)
    assert not is_outage(error_of(database, "SELECT * FROM missing"))  # a bug, not an outage
    assert not is_outage(ValueError("x"))
    database.dispose()


def test_a_postgresql_nobody_listens_on_is_an_outage():
    pytest.importorskip("psycopg")
    with socket.socket() as probe:  # a port that was free a moment ago: nobody listens there
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    database = Database(f"postgresql://postgres@127.0.0.1:{port}/none")
    assert is_outage(error_of(database, "SELECT 1"))
    database.dispose()


def test_pauses_double_up_to_the_bound_with_jitter_and_start_again_after_reset():
    backoff = Backoff(0.1, 1.0)
    pauses = [backoff.pause() for _ in range(8)]
    ceilings = [0.1, 0.2, 0.4, 0.8, 1.0, 1.0, 1.0, 1.0]
    assert all(c / 2 <= p <= c for p, c in zip(pauses, ceilings)), pauses
    assert len(set(pauses[4:])) > 1  # jittered: servers do not come back in step
    backoff.reset()
    assert backoff.pause() <= 0.1


def test_an_outage_is_logged_once_and_lasts_while_any_thread_still_fails(caplog):
    health = DatabaseHealth()
    locked = sqlite3.OperationalError("database is locked")
    from sqlalchemy.exc import OperationalError

    outage = OperationalError("INSERT", {}, locked)
    with caplog.at_level(logging.WARNING, logger="assay.store.outage"):
        assert health.failed("the writer", outage)
        for _ in range(5):
            assert health.failed("the writer again", outage)
        reader = threading.Thread(target=health.succeeded, name="a reader")  # a read still goes through
        reader.start()
        reader.join()
        assert health.reason() is not None and "the writer" in health.reason()
        assert not health.failed("a bug", ValueError("no"))
        health.succeeded()  # the writer's own call goes through
    assert health.reason() is None
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 2 and "unreachable" in messages[0] and "back after" in messages[1], messages


def test_call_retries_an_outage_until_it_passes_and_raises_anything_else():
    health = DatabaseHealth()
    from sqlalchemy.exc import OperationalError

    attempts = []

    def flaky() -> str:
        attempts.append(1)
        if len(attempts) < 3:
            raise OperationalError("SELECT", {}, ConnectionRefusedError("refused"))
        return "done"

    assert health.call(flaky, "test", threading.Event(), Backoff(0.001, 0.01)) == (True, "done")
    assert len(attempts) == 3 and health.reason() is None
    with pytest.raises(ValueError):
        health.call(lambda: int("x"), "test", threading.Event())
    stop = threading.Event()
    stop.set()
    assert health.call(flaky, "test", stop) == (False, None)
