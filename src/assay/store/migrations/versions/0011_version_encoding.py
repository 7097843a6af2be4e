"""A dataset version says the text encoding its file was read in (``dataset_versions.encoding``:
``UTF-8``, ``GB18030``, ``UTF-16``, ...): a CSV saved by Chinese Excel is GBK, read as
GB18030. Null for versions before, and for formats without a choice (JSONL, JSON, Parquet,
inline rows). Literal data only: nothing here imports assay.

Revision ID: 0011
Revises: 0010
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.add_column("dataset_versions", sa.Column("encoding", sa.String(16), nullable=True))


def downgrade() -> None:
    # A plain ALTER TABLE on both engines, as 0006's downgrade (a batch copy would cascade deletes).
    op.drop_column("dataset_versions", "encoding")
