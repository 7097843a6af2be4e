"""Online evaluation: spans received over OTLP, online rules, their jobs and their results.

Frozen: the tables as they are at this revision, spelled out (a migration never reads today's models).

Revision ID: 0010
Revises: 0009
Create Date: 2026-11-28
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0010"
down_revision = "0009"
branch_labels = None
depends_on = None

Json = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
RowId = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _stamp(name: str, nullable: bool = False) -> sa.Column:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "online_spans",
        sa.Column("id", RowId, primary_key=True, autoincrement=True),
        sa.Column("user_id", sa.String(36), sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
        sa.Column("trace_id", sa.String(32), nullable=False),
        sa.Column("span_id", sa.String(16), nullable=False),
        sa.Column("parent_span_id", sa.String(16), nullable=True),
        sa.Column("name", sa.Text, nullable=False),
        sa.Column("kind", sa.Integer, nullable=False),
        sa.Column("start_ns", sa.BigInteger, nullable=False),
        sa.Column("end_ns", sa.BigInteger, nullable=False),
        sa.Column("status_code", sa.Integer, nullable=False),
        sa.Column("status_message", sa.Text, nullable=True),
        sa.Column("attributes", Json, nullable=False),
        sa.Column("events", Json, nullable=False),
        sa.Column("resource", Json, nullable=False),
        sa.Column("conversation_id", sa.String(200), nullable=True),
        _stamp("received_at"),
        sa.UniqueConstraint("user_id", "trace_id", "span_id", name="uq_online_span"),
    )
    op.create_index("ix_online_spans_user_start", "online_spans", ["user_id", "start_ns"])
    op.create_index("ix_online_spans_user_conversation", "online_spans", ["user_id", "conversation_id"])
    op.create_table(
        "online_rules",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("user_id", sa.String(36), sa.ForeignKey("users.id", ondelete="CASCADE"), nullable=False),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("filter", sa.Text, nullable=False),
        sa.Column("sample_rate", sa.Float, nullable=False),
        sa.Column("scope", sa.String(16), nullable=False),
        sa.Column("quiet_s", sa.Integer, nullable=False),
        sa.Column("evaluators", Json, nullable=False),
        sa.Column("enabled", sa.Boolean, nullable=False),
        sa.Column("judge_budget_per_day", sa.Integer, nullable=True),
        _stamp("created_at"),
        _stamp("updated_at"),
    )
    op.create_index("ix_online_rules_user_id", "online_rules", ["user_id"])
    op.create_table(
        "online_jobs",
        sa.Column("id", RowId, primary_key=True, autoincrement=True),
        sa.Column("rule_id", sa.String(36), sa.ForeignKey("online_rules.id", ondelete="CASCADE"), nullable=False),
        sa.Column("user_id", sa.String(36), nullable=False),
        sa.Column("scope", sa.String(16), nullable=False),
        sa.Column("target", sa.String(200), nullable=False),
        sa.Column("generation", sa.Integer, nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("ready", sa.Boolean, nullable=False),
        _stamp("due_at"),
        sa.Column("holder", sa.String(120), nullable=True),
        _stamp("lease_until", nullable=True),
        sa.Column("attempts", sa.Integer, nullable=False),
        _stamp("created_at"),
        sa.UniqueConstraint("rule_id", "target", "generation", name="uq_online_job"),
    )
    op.create_index("ix_online_jobs_state_due", "online_jobs", ["state", "due_at"])
    op.create_table(
        "online_results",
        sa.Column("id", RowId, primary_key=True, autoincrement=True),
        sa.Column("rule_id", sa.String(36), sa.ForeignKey("online_rules.id", ondelete="CASCADE"), nullable=False),
        sa.Column("target", sa.String(200), nullable=False),
        sa.Column("generation", sa.Integer, nullable=False),
        sa.Column("trace_id", sa.String(32), nullable=False),
        sa.Column("span_id", sa.String(16), nullable=False),
        sa.Column("evaluator_id", sa.String(36), nullable=False),
        sa.Column("evaluator_version", sa.String(16), nullable=False),
        sa.Column("evaluator_name", sa.String(200), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("passed", sa.Boolean, nullable=False),
        sa.Column("score", sa.Float, nullable=True),
        sa.Column("weight", sa.Float, nullable=False),
        sa.Column("reason", sa.Text, nullable=True),
        sa.Column("error_code", sa.String(32), nullable=True),
        sa.Column("details", Json, nullable=False),
        sa.Column("latency_ms", sa.Float, nullable=False),
        _stamp("at"),
        _stamp("graded_at"),
        sa.UniqueConstraint("rule_id", "target", "generation", "evaluator_id", "evaluator_version",
                            name="uq_online_result"),
    )
    op.create_index("ix_online_results_rule_at", "online_results", ["rule_id", "at"])


def downgrade() -> None:
    for table in ("online_results", "online_jobs", "online_rules", "online_spans"):
        op.drop_table(table)
