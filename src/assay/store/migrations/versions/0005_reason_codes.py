"""Results keep the code and arguments of the message their reason says
(``evaluation_results.reason_code``, ``reason_args``), so that pages can say it in their
language; ``reason`` keeps the English text. Rows graded before have neither (null), and are
shown as their text. Literal data only: nothing here imports assay.

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-27
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0005"
down_revision = "0004"
branch_labels = None
depends_on = None

Json = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    with op.batch_alter_table("evaluation_results") as batch:
        batch.add_column(sa.Column("reason_code", sa.String(64), nullable=True))
        batch.add_column(sa.Column("reason_args", Json, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("evaluation_results") as batch:
        batch.drop_column("reason_args")
        batch.drop_column("reason_code")
