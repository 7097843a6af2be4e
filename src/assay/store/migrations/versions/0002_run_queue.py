"""The run queue and the change counters: a run's work in slices leased by any server of the
database (``run_slices``), and one counter per topic of change that servers poll instead of
files on one machine (``change_counters``).

Revision ID: 0002q
Revises: 0001
Create Date: 2026-11-26
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002q"
down_revision = "0001"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "run_slices",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("run_id", sa.String(36), sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
        sa.Column("user_id", sa.String(36), nullable=False),
        sa.Column("start", sa.Integer, nullable=False),
        sa.Column("stop", sa.Integer, nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("holder", sa.String(120), nullable=True),
        sa.Column("lease_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("attempts", sa.Integer, nullable=False),
    )
    op.create_index("ix_slices_state_lease", "run_slices", ["state", "lease_until"])
    op.create_index("ix_slices_run_state", "run_slices", ["run_id", "state"])
    # A slice reads the results of its own range of samples: the index the range needs.
    op.create_index("ix_results_run_index", "evaluation_results", ["run_id", "sample_index"])
    counters = op.create_table(
        "change_counters",
        sa.Column("topic", sa.String(32), primary_key=True),
        sa.Column("counter", sa.BigInteger, nullable=False),
    )
    op.bulk_insert(counters, [{"topic": "evaluators", "counter": 0}, {"topic": "tokens", "counter": 0}])


def downgrade() -> None:
    op.drop_table("change_counters")
    op.drop_index("ix_results_run_index", "evaluation_results")
    op.drop_index("ix_slices_run_state", "run_slices")
    op.drop_index("ix_slices_state_lease", "run_slices")
    op.drop_table("run_slices")
