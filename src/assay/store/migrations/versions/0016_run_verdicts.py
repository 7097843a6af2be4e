"""A finished run's verdicts, kept for comparisons: ``run_verdicts`` holds them in parts of
bytes, the last one marked ``final``. Runs finished before this revision have none: their
first comparison reads their results and stores the table then.

Frozen: the table as it is at this revision, spelled out (a migration never reads today's models).

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0016"
down_revision = "0015"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "run_verdicts",
        sa.Column("run_id", sa.String(36), sa.ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("part", sa.Integer, primary_key=True),
        sa.Column("samples", sa.Integer, nullable=False),
        sa.Column("final", sa.Boolean, nullable=False),
        sa.Column("body", sa.LargeBinary, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("run_verdicts")
