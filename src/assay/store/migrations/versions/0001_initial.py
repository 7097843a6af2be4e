"""The first schema: users, API tokens, evaluators, tasks and their evaluators, runs,
evaluation results. Schema only: the preset rows are seeded at start-up (``store.presets``).

Revision ID: 0001
Revises:
Create Date: 2026-11-23
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None

Json = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")


def _stamp(name: str) -> sa.Column:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=False)


def upgrade() -> None:
    op.create_table(
        "users",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("name", sa.String(200), nullable=False, unique=True),
        sa.Column("is_admin", sa.Boolean, nullable=False),
        _stamp("created_at"),
    )
    op.create_table(
        "api_tokens",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("user_id", sa.String(36), sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False,
                  index=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("token_hash", sa.String(64), nullable=False, unique=True),
        sa.Column("prefix", sa.String(16), nullable=False),
        _stamp("created_at"),
        sa.Column("revoked_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_table(
        "evaluators",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("description", sa.Text, nullable=True),
        sa.Column("type", sa.String(16), nullable=False, index=True),
        sa.Column("config", Json, nullable=False),
        sa.Column("is_preset", sa.Boolean, nullable=False),
        sa.Column("created_by_id", sa.String(36), sa.ForeignKey("users.id", ondelete="SET NULL"), nullable=True),
        _stamp("created_at"),
        _stamp("updated_at"),
    )
    op.create_table(
        "tasks",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("description", sa.Text, nullable=True),
        sa.Column("dataset_name", sa.String(300), nullable=True),
        sa.Column("dataset", Json, nullable=False),
        sa.Column("created_by_id", sa.String(36), sa.ForeignKey("users.id", ondelete="SET NULL"), nullable=True),
        _stamp("created_at"),
        _stamp("updated_at"),
    )
    op.create_table(
        "task_evaluators",
        sa.Column("task_id", sa.String(36), sa.ForeignKey("tasks.id", ondelete="CASCADE"), primary_key=True),
        sa.Column("evaluator_id", sa.String(36), sa.ForeignKey("evaluators.id", ondelete="RESTRICT"),
                  primary_key=True, index=True),
        sa.Column("weight", sa.Float, nullable=False),
        sa.Column("position", sa.Integer, nullable=False),
    )
    op.create_table(
        "runs",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("task_id", sa.String(36), sa.ForeignKey("tasks.id", ondelete="CASCADE"), nullable=False,
                  index=True),
        sa.Column("status", sa.String(16), nullable=False, index=True),
        sa.Column("evaluators", Json, nullable=False),
        sa.Column("total", sa.Integer, nullable=False),
        sa.Column("done", sa.Integer, nullable=False),
        sa.Column("summary", Json, nullable=True),
        sa.Column("error", sa.Text, nullable=True),
        sa.Column("created_by_id", sa.String(36), sa.ForeignKey("users.id", ondelete="SET NULL"), nullable=True),
        _stamp("created_at"),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
    )
    op.create_table(
        "evaluation_results",
        sa.Column("id", sa.Integer, primary_key=True, autoincrement=True),
        sa.Column("run_id", sa.String(36), sa.ForeignKey("runs.id", ondelete="CASCADE"), nullable=False),
        sa.Column("sample_id", sa.String(300), nullable=False),
        sa.Column("sample_index", sa.Integer, nullable=False),
        sa.Column("evaluator_id", sa.String(36), sa.ForeignKey("evaluators.id", ondelete="RESTRICT"),
                  nullable=False),
        sa.Column("evaluator_name", sa.String(200), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("passed", sa.Boolean, nullable=False),
        sa.Column("score", sa.Float, nullable=True),
        sa.Column("reason", sa.Text, nullable=True),
        sa.Column("details", Json, nullable=False),
        sa.Column("error_code", sa.String(32), nullable=True),
        sa.Column("latency_ms", sa.Float, nullable=False),
        _stamp("created_at"),
        sa.UniqueConstraint("run_id", "sample_id", "evaluator_id", name="uq_result_run_sample_evaluator"),
    )
    op.create_index("ix_results_run_status", "evaluation_results", ["run_id", "status"])
    op.create_index("ix_results_run_evaluator", "evaluation_results", ["run_id", "evaluator_id"])


def downgrade() -> None:
    for table in ("evaluation_results", "runs", "task_evaluators", "tasks", "evaluators", "api_tokens", "users"):
        op.drop_table(table)
