"""Bringing a database's schema up to date with the Alembic migrations shipped in the package
(``assay db upgrade``, and ``assay serve`` at start)."""

from __future__ import annotations

from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

from assay.store.db import Database
from assay.store.presets import seed_presets

MIGRATIONS = Path(__file__).parent / "migrations"


def _config(database: Database | None = None) -> Config:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    if database is not None:
        config.set_main_option("sqlalchemy.url", database.url.replace("%", "%%"))
    return config


def upgrade(database: Database, revision: str = "head") -> None:
    """Apply every migration up to ``revision``; a database already there is left as it is.
    At the head revision, the preset rows are then brought to ``store.presets`` (migrations
    hold schema only, never today's data)."""
    config = _config(database)
    with database.engine.begin() as connection:
        config.attributes["connection"] = connection
        command.upgrade(config, revision)
        if revision == "head":
            seed_presets(connection)


def current_revision(database: Database) -> str | None:
    """The revision the database is at, or None for an empty database."""
    with database.engine.connect() as connection:
        return MigrationContext.configure(connection).get_current_revision()


def head_revision() -> str | None:
    """The newest revision shipped with this version of assay."""
    return ScriptDirectory.from_config(_config()).get_current_head()
