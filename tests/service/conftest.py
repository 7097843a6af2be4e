"""Fixtures of the service tests: databases (a SQLite file, or a database on a real
PostgreSQL server started once per session), the app on either, users with tokens.

``db_url`` is parametrised over both databases, so every test that uses it runs twice; the
PostgreSQL variant carries the ``postgres`` marker and is skipped, saying why, only when the
server's binaries are missing.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from pg_server import PostgresServer, missing  # noqa: E402
from service_support import Api, make_api  # noqa: E402

from assay.settings import Settings  # noqa: E402
from assay.store import Database, upgrade  # noqa: E402


def _started_postgres() -> Iterator[PostgresServer]:
    problem = missing()
    if problem:
        pytest.skip(problem)
    server = PostgresServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def pg_server() -> Iterator[PostgresServer]:
    yield from _started_postgres()


@pytest.fixture
def own_postgres() -> Iterator[PostgresServer]:
    """A PostgreSQL server of one test alone: it may be stopped and started again mid-test."""
    yield from _started_postgres()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def db_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'assay.db'}"
    return request.getfixturevalue("pg_server").new_database()


@pytest.fixture(scope="session")
def shared_resources():
    """The real sandbox and judge client, started once for the session's apps (closed at the end)."""
    from assay.runner.resources import build_resources

    resources = build_resources(Settings.from_env({"ASSAY_JUDGE_CACHE": "off"}))
    yield resources
    resources.code_runner.close()
    resources.judge_client.close()


@pytest.fixture
def database(db_url: str) -> Iterator[Database]:
    """The store on ``db_url``, migrated (presets seeded), disposed after the test."""
    db = Database(db_url)
    upgrade(db)
    yield db
    db.dispose()


@pytest.fixture
def api(db_url: str, shared_resources) -> Iterator[Api]:
    yield from make_api(db_url, shared_resources)


@pytest.fixture
def sqlite_api(tmp_path: Path, shared_resources) -> Iterator[Api]:
    """The app on SQLite only, for checks that do not depend on the database."""
    yield from make_api(f"sqlite:///{tmp_path / 'assay.db'}", shared_resources)
