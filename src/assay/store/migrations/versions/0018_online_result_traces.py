"""Online results are found by their trace: the traces page counts the verdicts of the traces it
shows, and a trace's page lists the verdicts given on it. Without an index on ``trace_id`` both
read every result of the user's rules.

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-29
"""

from __future__ import annotations

from alembic import op

revision = "0018"
down_revision = "0017"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_index("ix_online_results_trace", "online_results", ["trace_id"])


def downgrade() -> None:
    op.drop_index("ix_online_results_trace", table_name="online_results")
