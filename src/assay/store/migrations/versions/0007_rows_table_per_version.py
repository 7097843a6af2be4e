"""PostgreSQL: each dataset version's rows in a table of their own, keyed once they are in.

``dataset_rows`` kept two b-trees over every version's rows, (version, position) and (version,
sample id), both with text keys and both updated row by row as an upload's ``COPY`` went: two
thirds of PostgreSQL's work per uploaded row. Now a version's rows go to
``dataset_rows_<the version id's 32 hex digits>`` (the columns of ``dataset_rows``), written
without index and keyed once at the end of the upload by two sorted index builds: the primary
key on ``position`` and a unique index ``<table>_sample`` on ``sample_id``. Deleting a version
drops its table (the statement trigger of revision 0004, whose function is replaced). Here every
version's rows move into their table, and ``dataset_rows`` is left empty on PostgreSQL.

SQLite is unchanged: its per-row keys cost little, and it keeps ``dataset_rows``.
Literal SQL only: nothing here imports assay.

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0007"
down_revision = "0006"
branch_labels = None
depends_on = None

_DROP_TABLES = """
    CREATE OR REPLACE FUNCTION assay_delete_version_rows() RETURNS trigger LANGUAGE plpgsql AS $$
    DECLARE
        gone_id text;
    BEGIN
        FOR gone_id IN SELECT id FROM gone LOOP
            EXECUTE format('DROP TABLE IF EXISTS %I', 'dataset_rows_' || lower(replace(gone_id, '-', '')));
        END LOOP;
        RETURN NULL;
    END $$"""

_DELETE_ROWS = """
    CREATE OR REPLACE FUNCTION assay_delete_version_rows() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        DELETE FROM dataset_rows WHERE version_id IN (SELECT id FROM gone);
        RETURN NULL;
    END $$"""
"""Revision 0004's function, put back by the downgrade."""


def _table(version_id: str) -> str:
    return "dataset_rows_" + version_id.replace("-", "").lower()


def _version_ids() -> list[str]:
    return [r[0] for r in op.get_bind().execute(sa.text("SELECT id FROM dataset_versions ORDER BY id"))]


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for version_id in _version_ids():
        name = _table(version_id)
        literal = version_id.replace("'", "''")
        op.execute(f'CREATE TABLE "{name}" (version_id varchar(36) NOT NULL DEFAULT \'{literal}\' '
                   f"CHECK (version_id = '{literal}'), position integer NOT NULL, sample_id varchar(300) NOT NULL, "
                   "data text NOT NULL)")
        op.execute(sa.text(f'INSERT INTO "{name}" (position, sample_id, data) SELECT position, sample_id, data '
                           "FROM dataset_rows WHERE version_id = :id ORDER BY position").bindparams(id=version_id))
        op.execute(f'ALTER TABLE "{name}" ADD PRIMARY KEY (position)')
        op.execute(f'CREATE UNIQUE INDEX "{name}_sample" ON "{name}" (sample_id)')
    op.execute("TRUNCATE dataset_rows")
    op.execute(_DROP_TABLES)


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute(_DELETE_ROWS)
    present = {r[0] for r in op.get_bind().execute(sa.text(
        "SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND tablename LIKE 'dataset\\_rows\\_%'"))}
    for version_id in _version_ids():
        name = _table(version_id)
        if name in present:
            op.execute(f'INSERT INTO dataset_rows (version_id, position, sample_id, data) '
                       f'SELECT version_id, position, sample_id, data FROM "{name}" ORDER BY position')
    for name in sorted(present):
        op.execute(f'DROP TABLE "{name}"')
