"""The tables of online evaluation: spans received over OTLP, online rules, the jobs their
rules schedule, and the results of those jobs.

A span is stored once per (user, trace id, span id): exporters retry, and a batch sent again
inserts nothing. A job is one grading of one target (a span, a trace or a conversation) by one
rule, numbered by ``generation`` (a trace that receives spans after it was graded is graded
once more, as generation 2). A result is unique per (rule, target, generation, evaluator,
evaluator version).
"""

from __future__ import annotations

from datetime import datetime
from enum import StrEnum
from typing import Any

from sqlalchemy import JSON, BigInteger, Boolean, DateTime, Float, ForeignKey, Index, Integer, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from assay.store.clean import NulSafeJson, NulSafeText
from assay.store.models import NAME_MAX, Base, new_id, utcnow

RowId = BigInteger().with_variant(Integer, "sqlite")
"""A 64-bit key that SQLite still numbers itself (only ``INTEGER PRIMARY KEY`` does)."""
TARGET_MAX = 200
"""The longest target key of a job: ``trace:span`` ids, or a conversation id (checked on intake)."""


class Scope(StrEnum):
    """What one grading of a rule looks at."""

    SPAN = "span"
    TRACE = "trace"
    CONVERSATION = "conversation"


class JobState(StrEnum):
    PENDING = "pending"
    LEASED = "leased"
    DONE = "done"


class OnlineSpan(Base):
    """One span as received: its ids, times (Unix nanoseconds), status, and its attributes,
    events and resource attributes flattened to JSON values (``service.online.otlp``)."""

    __tablename__ = "online_spans"
    __table_args__ = (
        UniqueConstraint("user_id", "trace_id", "span_id", name="uq_online_span"),
        Index("ix_online_spans_user_start", "user_id", "start_ns"),
        Index("ix_online_spans_user_conversation", "user_id", "conversation_id"),
    )

    id: Mapped[int] = mapped_column(RowId, primary_key=True, autoincrement=True)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    trace_id: Mapped[str] = mapped_column(String(32))
    span_id: Mapped[str] = mapped_column(String(16))
    parent_span_id: Mapped[str | None] = mapped_column(String(16), nullable=True)
    name: Mapped[str] = mapped_column(NulSafeText)
    kind: Mapped[int] = mapped_column(Integer, default=0)
    start_ns: Mapped[int] = mapped_column(BigInteger)
    end_ns: Mapped[int] = mapped_column(BigInteger)
    status_code: Mapped[int] = mapped_column(Integer, default=0)
    status_message: Mapped[str | None] = mapped_column(NulSafeText, nullable=True)
    attributes: Mapped[dict[str, Any]] = mapped_column(NulSafeJson, default=dict)
    events: Mapped[list[dict[str, Any]]] = mapped_column(NulSafeJson, default=list)
    resource: Mapped[dict[str, Any]] = mapped_column(NulSafeJson, default=dict)
    conversation_id: Mapped[str | None] = mapped_column(String(TARGET_MAX), nullable=True)
    received_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class OnlineArrival(Base):
    """Spans stored by one export request and not yet looked at by their owner's rules: the
    intake answers once the spans and this row are committed together, and the planner
    (``service.online.planner``) schedules their jobs and deletes the row in one transaction,
    so each new span meets the rules exactly once, across crashes and on any server."""

    __tablename__ = "online_arrivals"

    id: Mapped[int] = mapped_column(RowId, primary_key=True, autoincrement=True)
    user_id: Mapped[str] = mapped_column(String(36))
    span_ids: Mapped[list[int]] = mapped_column(JSON)
    """The ``online_spans`` row ids of the spans new in that request."""
    spans: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class OnlineRule(Base):
    """Which spans a user's evaluators grade as they arrive: a filter over attributes, a
    sample rate, a scope, the evaluators with weights, and a daily budget of judge calls."""

    __tablename__ = "online_rules"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(NAME_MAX))
    filter: Mapped[str] = mapped_column(NulSafeText, default="")
    sample_rate: Mapped[float] = mapped_column(Float, default=1.0)
    scope: Mapped[str] = mapped_column(String(16), default=Scope.SPAN.value)
    quiet_s: Mapped[int] = mapped_column(Integer, default=30)
    evaluators: Mapped[list[dict[str, Any]]] = mapped_column(NulSafeJson, default=list)
    """``[{"evaluatorId": ..., "weight": ...}]`` as validated by the API."""
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    judge_budget_per_day: Mapped[int | None] = mapped_column(Integer, nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow, onupdate=utcnow)


class OnlineJob(Base):
    """One grading of ``target`` by a rule: due once ``ready`` (a trace's root span arrived)
    and ``due_at`` passed (the quiet window after its last span). A claim of the run queue
    takes due jobs into an online slice (``run_slices``, kind online): ``state`` ``leased`` and
    ``slice_id`` set; the slice carries the lease, heartbeats and takeover, the job stays in it
    until graded (``done``). ``holder`` and ``lease_until`` are from before the shared queue
    (revision 0017) and stay empty."""

    __tablename__ = "online_jobs"
    __table_args__ = (
        UniqueConstraint("rule_id", "target", "generation", name="uq_online_job"),
        Index("ix_online_jobs_state_due", "state", "due_at"),
        Index("ix_online_jobs_slice", "slice_id"),
    )

    id: Mapped[int] = mapped_column(RowId, primary_key=True, autoincrement=True)
    rule_id: Mapped[str] = mapped_column(ForeignKey("online_rules.id", ondelete="CASCADE"))
    user_id: Mapped[str] = mapped_column(String(36))
    scope: Mapped[str] = mapped_column(String(16))
    target: Mapped[str] = mapped_column(String(TARGET_MAX))
    generation: Mapped[int] = mapped_column(Integer, default=1)
    state: Mapped[str] = mapped_column(String(16), default=JobState.PENDING.value)
    ready: Mapped[bool] = mapped_column(Boolean, default=True)
    due_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    holder: Mapped[str | None] = mapped_column(String(120), nullable=True)
    lease_until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    slice_id: Mapped[int | None] = mapped_column(Integer, nullable=True)
    """The online slice of the run queue that holds the job (no key: done slices are purged)."""


class OnlineResult(Base):
    """One evaluator's verdict on one job's target. ``span_id`` is the span graded (for a
    trace or a conversation, its first root span); ``at`` is when that span started, the time
    the summaries bucket by. ``status`` is a grade's status or ``not_applicable`` (no content)."""

    __tablename__ = "online_results"
    __table_args__ = (
        UniqueConstraint("rule_id", "target", "generation", "evaluator_id", "evaluator_version",
                         name="uq_online_result"),
        Index("ix_online_results_rule_at", "rule_id", "at"),
        Index("ix_online_results_trace", "trace_id"),
    )

    id: Mapped[int] = mapped_column(RowId, primary_key=True, autoincrement=True)
    rule_id: Mapped[str] = mapped_column(ForeignKey("online_rules.id", ondelete="CASCADE"))
    target: Mapped[str] = mapped_column(String(TARGET_MAX))
    generation: Mapped[int] = mapped_column(Integer, default=1)
    trace_id: Mapped[str] = mapped_column(String(32))
    span_id: Mapped[str] = mapped_column(String(16))
    evaluator_id: Mapped[str] = mapped_column(String(36))
    evaluator_version: Mapped[str] = mapped_column(String(16))
    evaluator_name: Mapped[str] = mapped_column(String(NAME_MAX))
    kind: Mapped[str] = mapped_column(String(16))
    status: Mapped[str] = mapped_column(String(16))
    passed: Mapped[bool] = mapped_column(Boolean, default=False)
    score: Mapped[float | None] = mapped_column(Float, nullable=True)
    weight: Mapped[float] = mapped_column(Float, default=1.0)
    reason: Mapped[str | None] = mapped_column(NulSafeText, nullable=True)
    error_code: Mapped[str | None] = mapped_column(String(32), nullable=True)
    details: Mapped[dict[str, Any]] = mapped_column(NulSafeJson, default=dict)
    latency_ms: Mapped[float] = mapped_column(Float, default=0.0)
    at: Mapped[datetime] = mapped_column(DateTime(timezone=True))
    graded_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


__all__ = ["JobState", "OnlineArrival", "OnlineJob", "OnlineResult", "OnlineRule", "OnlineSpan", "Scope"]
