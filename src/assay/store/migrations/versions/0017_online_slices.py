"""Online jobs are graded through the run queue: ``run_slices`` gets a ``kind`` (``run``, or
``online`` for a batch of one user's online jobs, with no run), and ``online_jobs`` the
``slice_id`` of the online slice that holds them. Jobs pending now carry over as they are (the
next claim takes them into slices); jobs leased by a server of the previous version go back to
pending (their leases were the jobs' own, which nothing reads any more).

Frozen: the columns as they are at this revision, spelled out (a migration never reads today's models).

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-29
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0017"
down_revision = "0016"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("run_slices") as batch:
        batch.add_column(sa.Column("kind", sa.String(16), nullable=False, server_default="run"))
        batch.alter_column("run_id", existing_type=sa.String(36), nullable=True)
    op.create_index("ix_slices_kind_user", "run_slices", ["kind", "user_id", "claimed_at"])
    op.add_column("online_jobs", sa.Column("slice_id", sa.Integer, nullable=True))
    op.create_index("ix_online_jobs_slice", "online_jobs", ["slice_id"])
    op.execute("UPDATE online_jobs SET state = 'pending', holder = NULL, lease_until = NULL WHERE state = 'leased'")


def downgrade() -> None:
    op.execute("UPDATE online_jobs SET state = 'pending', holder = NULL, lease_until = NULL WHERE state = 'leased'")
    op.drop_index("ix_online_jobs_slice", "online_jobs")
    op.drop_column("online_jobs", "slice_id")
    op.execute("DELETE FROM run_slices WHERE kind = 'online'")
    op.drop_index("ix_slices_kind_user", "run_slices")
    with op.batch_alter_table("run_slices") as batch:
        batch.alter_column("run_id", existing_type=sa.String(36), nullable=False)
        batch.drop_column("kind")
