"""Paused evaluators of runs: an evaluator that timed out on many samples in a row stops being
graded in that run until its owner resumes it (``store.pauses``).

Frozen: the table as it is at this revision, spelled out (a migration never reads today's models).

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0013"
down_revision = "0012"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "run_pauses",
        sa.Column("run_id", sa.String(36), sa.ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("evaluator_id", sa.String(36), primary_key=True),
        sa.Column("paused_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("timeouts", sa.Integer, nullable=False),
        sa.Column("counted_after", sa.Integer, nullable=False),
    )


def downgrade() -> None:
    op.drop_table("run_pauses")
