"""A task may pin the version of its dataset that its runs grade (``tasks.pinned_version``, a
version number of the task's dataset); null, as every task before, grades the newest ready
version at each run's start. Literal data only: nothing here imports assay.

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("tasks", sa.Column("pinned_version", sa.Integer, nullable=True))


def downgrade() -> None:
    # A plain ALTER TABLE on both engines (SQLite 3.35+ drops a column without key or index in
    # place): a batch copy of ``tasks`` would drop the old table, which with SQLite's foreign keys
    # on deletes every task's runs and results through their ON DELETE CASCADE.
    op.drop_column("tasks", "pinned_version")
