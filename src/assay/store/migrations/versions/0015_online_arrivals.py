"""Online spans are scheduled after the intake answers: ``online_arrivals`` holds, per export
request, the row ids of the spans it stored that no rule has looked at yet.

Frozen: the table as it is at this revision, spelled out (a migration never reads today's models).

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0015"
down_revision = "0014"
branch_labels = None
depends_on = None

RowId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "online_arrivals",
        sa.Column("id", RowId, primary_key=True, autoincrement=True),
        sa.Column("user_id", sa.String(36), nullable=False),
        sa.Column("span_ids", sa.JSON, nullable=False),
        sa.Column("spans", sa.Integer, nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("online_arrivals")
