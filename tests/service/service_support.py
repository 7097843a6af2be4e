"""Helpers of the service tests, importable by name (``service_support``) from test modules:
the app on a database with seeded users."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from assay.settings import Settings


@dataclass
class Api:
    """A TestClient on the app, and tokens of three users: alice and bob (plain), root (admin)."""

    client: object
    tokens: dict[str, str]
    database_url: str

    def as_(self, user: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.tokens[user]}"}

    def call(self, method: str, path: str, user: str = "alice", **kwargs):
        return self.client.request(method, "/api/v1" + path, headers=self.as_(user), **kwargs)


def seed_users(database_url: str) -> dict[str, str]:
    """alice, bob and root (admin), each with a token."""
    from assay.store import Database, upgrade
    from assay.store.users import create_token, create_user

    database = Database(database_url)
    upgrade(database)
    tokens = {}
    with database.session() as session:
        for name, admin in (("alice", False), ("bob", False), ("root", True)):
            create_user(session, name, is_admin=admin)
            tokens[name] = create_token(session, name).secret
    database.dispose()
    return tokens


def make_api(database_url: str, resources, **settings) -> Iterator[Api]:
    from fastapi.testclient import TestClient

    from assay.server import create_app

    tokens = seed_users(database_url)
    app = create_app(Settings(database_url=database_url, **settings), resources=resources)
    with TestClient(app) as client:
        yield Api(client, tokens, database_url)


def stored_rows(database, version_id: str) -> int:
    """How many rows the version has where its rows are stored (SQLite: ``dataset_rows``;
    PostgreSQL: the version's own table, 0 when that table is gone)."""
    from sqlalchemy import text

    from assay.store import row_tables

    with database.session() as session:
        if not row_tables.per_version(session):
            return session.scalar(text("SELECT count(*) FROM dataset_rows WHERE version_id = :v"), {"v": version_id})
        name = row_tables.table_name(version_id)
        if session.scalar(text("SELECT to_regclass(:t)"), {"t": f'"{name}"'}) is None:
            return 0
        return session.scalar(text(f'SELECT count(*) FROM "{name}"'))


def all_stored_rows(database) -> int:
    """Every version's rows, wherever they are stored, counted; on PostgreSQL a rows table left
    by a version that is gone counts as one more row, empty or not (it should not be there)."""
    from sqlalchemy import text

    from assay.store import row_tables

    with database.session() as session:
        count = session.scalar(text("SELECT count(*) FROM dataset_rows"))
        if row_tables.per_version(session):
            versions = {row_tables.table_name(v) for v in session.scalars(text("SELECT id FROM dataset_versions"))}
            for name in session.scalars(text("SELECT tablename FROM pg_tables WHERE tablename LIKE :p"),
                                        {"p": row_tables.PREFIX.replace("_", "\\_") + "%"}):
                count += session.scalar(text(f'SELECT count(*) FROM "{name}"')) + (name not in versions)
        return count
