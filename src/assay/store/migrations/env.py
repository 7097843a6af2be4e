"""Alembic's environment for assay's schema: run programmatically by ``assay.store.migrate``,
which hands over an open connection in ``config.attributes["connection"]``."""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection, create_engine

from assay.store.models import Base

config = context.config


def _run(connection: Connection) -> None:
    context.configure(connection=connection, target_metadata=Base.metadata, render_as_batch=True,
                      compare_type=True)
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    context.configure(url=config.get_main_option("sqlalchemy.url"), target_metadata=Base.metadata,
                      literal_binds=True, render_as_batch=True)
    with context.begin_transaction():
        context.run_migrations()
else:
    given = config.attributes.get("connection")
    if given is not None:
        _run(given)
    else:
        engine = create_engine(config.get_main_option("sqlalchemy.url") or "")
        try:
            with engine.begin() as connection:
                _run(connection)
        finally:
            engine.dispose()
