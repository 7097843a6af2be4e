"""PostgreSQL: ``dataset_rows`` without its per-row foreign key to ``dataset_versions``.

PostgreSQL checks a foreign key with a trigger per inserted row (a lookup and a lock of the
version's row), which halved the rate of an upload's ``COPY``. The rows of a version are only
ever written after the version itself is committed (``store.datasets.begin_version``), and an
upload whose version disappeared meanwhile removes what it wrote (``finish_version`` finds no
version to mark ready). What the key's ``ON DELETE CASCADE`` did stays in the database: a
statement-level trigger deletes the rows of the versions a statement deleted, in one pass
over the deleted versions, whoever deletes them.

SQLite keeps its key: its check is one index lookup, and dropping it would rebuild the table.
Literal SQL only: nothing here imports assay.

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-27
"""

from __future__ import annotations

from alembic import op

revision = "0004"
down_revision = "0003"
branch_labels = None
depends_on = None


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("ALTER TABLE dataset_rows DROP CONSTRAINT IF EXISTS dataset_rows_version_id_fkey")
    op.execute("""
        CREATE FUNCTION assay_delete_version_rows() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            DELETE FROM dataset_rows WHERE version_id IN (SELECT id FROM gone);
            RETURN NULL;
        END $$""")
    op.execute("""
        CREATE TRIGGER dataset_versions_delete_rows AFTER DELETE ON dataset_versions
        REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION assay_delete_version_rows()""")


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    op.execute("DROP TRIGGER IF EXISTS dataset_versions_delete_rows ON dataset_versions")
    op.execute("DROP FUNCTION IF EXISTS assay_delete_version_rows()")
    op.execute("DELETE FROM dataset_rows WHERE version_id NOT IN (SELECT id FROM dataset_versions)")
    op.execute("ALTER TABLE dataset_rows ADD CONSTRAINT dataset_rows_version_id_fkey FOREIGN KEY (version_id) "
               "REFERENCES dataset_versions (id) ON DELETE CASCADE")
