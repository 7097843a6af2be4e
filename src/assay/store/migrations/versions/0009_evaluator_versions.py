"""Evaluator versions: every save of an evaluator is kept (``evaluator_versions``: its number,
name, description, type and config as stored, who saved it and when), and the evaluator row
says which version it holds (``evaluators.version``). A run's snapshot names the version that
graded it. Each evaluator that exists (presets aside: they are read-only) gets version 1 from
its row as it is now, authored by its creator at its last update.
Literal data only: nothing here imports assay.

Revision ID: 0009
Revises: 0008
Create Date: 2026-12-08
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0009"
down_revision = "0008"
branch_labels = None
depends_on = None

Json = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def upgrade() -> None:
    op.create_table(
        "evaluator_versions",
        sa.Column("evaluator_id", sa.String(36), sa.ForeignKey("evaluators.id", ondelete="CASCADE"),
                  primary_key=True),
        sa.Column("number", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("description", sa.Text, nullable=True),
        sa.Column("type", sa.String(16), nullable=False),
        sa.Column("config", Json, nullable=False),
        sa.Column("author_id", sa.String(36), sa.ForeignKey("users.id", ondelete="SET NULL"), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
    )
    op.add_column("evaluators", sa.Column("version", sa.Integer, nullable=False, server_default="1"))
    evaluators = sa.table("evaluators", sa.column("id", sa.String), sa.column("name", sa.String),
                          sa.column("description", sa.Text), sa.column("type", sa.String),
                          sa.column("config", Json), sa.column("is_preset", sa.Boolean),
                          sa.column("created_by_id", sa.String), sa.column("updated_at", sa.DateTime(timezone=True)))
    versions = sa.table("evaluator_versions", sa.column("evaluator_id", sa.String), sa.column("number", sa.Integer),
                        sa.column("name", sa.String), sa.column("description", sa.Text),
                        sa.column("type", sa.String), sa.column("config", Json), sa.column("author_id", sa.String),
                        sa.column("created_at", sa.DateTime(timezone=True)))
    # One statement, the configs copied by the database as they are stored (no round trip).
    op.execute(versions.insert().from_select(
        ["evaluator_id", "number", "name", "description", "type", "config", "author_id", "created_at"],
        sa.select(evaluators.c.id, sa.literal(1, sa.Integer), evaluators.c.name, evaluators.c.description,
                  evaluators.c.type, evaluators.c.config, evaluators.c.created_by_id, evaluators.c.updated_at)
        .where(evaluators.c.is_preset.is_(False))))


def downgrade() -> None:
    # A plain ALTER TABLE on both engines (see 0006): no batch copy of ``evaluators``.
    op.drop_column("evaluators", "version")
    op.drop_table("evaluator_versions")
