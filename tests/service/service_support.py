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
