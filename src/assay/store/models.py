"""The service's tables, as SQLAlchemy 2.0 declarative models.

The product specification's data model (evaluators with ``type``, ``config`` JSON,
``is_preset``, ``created_by``, timestamps and an index on type), plus what the service needs
around it: users and their API tokens, tasks (a dataset and the evaluators attached with
weights), runs of a task, and one evaluation result per (run, sample, evaluator). The schema
itself is created by the Alembic migrations in ``store/migrations``, never by ``create_all``,
so the two cannot drift apart unnoticed (``tests/service/test_store.py`` compares them).
"""

from __future__ import annotations

import re
import uuid
from datetime import UTC, datetime
from enum import StrEnum
from typing import Any, Literal, get_args

from sqlalchemy import (
    BigInteger,
    Boolean,
    ColumnElement,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    and_,
    or_,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from assay.store.clean import NulSafeJson, NulSafeText
from assay.store.snapshot import RunEvaluator, read_snapshot

Json = NulSafeJson
"""JSON everywhere, stored as JSONB on PostgreSQL (its strings' NULs escaped there: ``store.clean``)."""

EvaluatorType = Literal["preset", "code", "llm", "composite"]
"""What an evaluator row is (the API's ``type``), spelled here once."""
EVALUATOR_TYPES: tuple[EvaluatorType, ...] = get_args(EvaluatorType)


class RunState(StrEnum):
    """Where a run is: waiting, being graded, or finished one of three ways."""

    QUEUED = "queued"
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"


RUN_STATES: tuple[str, ...] = tuple(s.value for s in RunState)
ACTIVE_STATES: tuple[str, ...] = (RunState.QUEUED.value, RunState.RUNNING.value)
"""A run in one of these may still change; the others are final. (Plain strings, as the
database driver is handed them.)"""
FINAL_STATES: tuple[str, ...] = (RunState.COMPLETED.value, RunState.FAILED.value, RunState.CANCELLED.value)
NAME_MAX = 200
"""The longest name of a user, token, evaluator, task or dataset (the API checks it first)."""
SAMPLE_ID_MAX = 300
"""The longest sample id stored (a column's width): checked when a dataset is uploaded, so that
no engine ever meets a longer one."""


def new_id() -> str:
    """A fresh row id: a random UUID as text, as the specification's ``@default(uuid())``."""
    return str(uuid.uuid4())


_ROW_ID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def is_row_id(value: object) -> bool:
    """Whether ``value`` has the shape of a row id (a UUID as text). Anything else names no row:
    it is answered "not found" without a query (PostgreSQL refuses a NUL in a parameter)."""
    return isinstance(value, str) and _ROW_ID.fullmatch(value) is not None


def utcnow() -> datetime:
    return datetime.now(UTC)


class Base(DeclarativeBase):
    """Declarative base of every table."""


class User(Base):
    __tablename__ = "users"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    name: Mapped[str] = mapped_column(String(NAME_MAX), unique=True)
    is_admin: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    deactivated_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    """Set by an admin: the user's tokens were revoked then and none can be issued; their rows stay."""


class ApiToken(Base):
    """A bearer token; only its SHA-256 is kept, so a stolen database yields no usable token."""

    __tablename__ = "api_tokens"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    user_id: Mapped[str] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), index=True)
    name: Mapped[str] = mapped_column(String(NAME_MAX), default="")
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    prefix: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    revoked_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)


class Evaluator(Base):
    __tablename__ = "evaluators"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    name: Mapped[str] = mapped_column(String(NAME_MAX))
    description: Mapped[str | None] = mapped_column(Text, nullable=True)
    type: Mapped[EvaluatorType] = mapped_column(String(16), index=True)
    config: Mapped[dict[str, Any]] = mapped_column(Json)
    is_preset: Mapped[bool] = mapped_column(Boolean, default=False)
    created_by_id: Mapped[str | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow, onupdate=utcnow)
    version: Mapped[int] = mapped_column(Integer, default=1, server_default="1")
    """The number of the ``EvaluatorVersion`` this row holds (its newest save)."""


class EvaluatorVersion(Base):
    """One save of an evaluator, numbered from 1: what it was (name, description, type, config as
    stored), who saved it and when. Runs name the version that graded them."""

    __tablename__ = "evaluator_versions"

    evaluator_id: Mapped[str] = mapped_column(ForeignKey("evaluators.id", ondelete="CASCADE"), primary_key=True)
    number: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(NAME_MAX))
    description: Mapped[str | None] = mapped_column(Text, nullable=True)
    type: Mapped[EvaluatorType] = mapped_column(String(16))
    config: Mapped[dict[str, Any]] = mapped_column(Json)
    author_id: Mapped[str | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class Dataset(Base):
    """A named, versioned dataset. Its rows live in ``dataset_rows``, by version; this row and
    its versions' rows carry only what a listing shows (counts, columns, sizes)."""

    __tablename__ = "datasets"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    name: Mapped[str] = mapped_column(String(NAME_MAX))
    description: Mapped[str | None] = mapped_column(Text, nullable=True)
    created_by_id: Mapped[str | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow, onupdate=utcnow)


class DatasetVersion(Base):
    """One upload of a dataset, numbered from 1. ``ready`` is false while its rows stream in
    (each batch is committed on its own, so a long upload never holds the database's write
    lock); only ready versions are listed, graded or counted."""

    __tablename__ = "dataset_versions"
    __table_args__ = (UniqueConstraint("dataset_id", "number", name="uq_dataset_version_number"),)

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    dataset_id: Mapped[str] = mapped_column(ForeignKey("datasets.id", ondelete="CASCADE"), index=True)
    number: Mapped[int] = mapped_column(Integer)
    ready: Mapped[bool] = mapped_column(Boolean, default=False)
    source_name: Mapped[str | None] = mapped_column(String(300), nullable=True)
    format: Mapped[str] = mapped_column(String(16))
    encoding: Mapped[str | None] = mapped_column(String(16), nullable=True)
    row_count: Mapped[int] = mapped_column(Integer, default=0)
    size_bytes: Mapped[int] = mapped_column(BigInteger, default=0)
    columns: Mapped[list[str]] = mapped_column(Json, default=list)
    created_by_id: Mapped[str | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class DatasetRow(Base):
    """One row of a dataset version: its position, its sample id (unique in the version) and
    the stored sample as JSON text (text, not JSON/JSONB: written and read without a parse by
    the database, and a NUL escaped in JSON text is storable on PostgreSQL too). This table
    holds SQLite's rows; PostgreSQL keeps each version's rows in a table of their own with these
    columns, keyed once an upload's rows are in (``store.row_tables``, migration 0007)."""

    __tablename__ = "dataset_rows"
    # On SQLite the rows are kept in their primary key's order, without a rowid tree beside it:
    # one b-tree fewer to write per row of an upload.
    __table_args__ = (UniqueConstraint("version_id", "sample_id", name="uq_dataset_row_sample"),
                      {"sqlite_with_rowid": False})

    version_id: Mapped[str] = mapped_column(ForeignKey("dataset_versions.id", ondelete="CASCADE"),
                                            primary_key=True)
    position: Mapped[int] = mapped_column(Integer, primary_key=True)
    sample_id: Mapped[str] = mapped_column(String(SAMPLE_ID_MAX))
    data: Mapped[str] = mapped_column(Text)


class Task(Base):
    """A dataset to grade with the attached evaluators; a run grades the dataset's newest ready
    version at the time it starts, or the version ``pinned_version`` names."""

    __tablename__ = "tasks"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    name: Mapped[str] = mapped_column(String(NAME_MAX))
    description: Mapped[str | None] = mapped_column(Text, nullable=True)
    dataset_id: Mapped[str | None] = mapped_column(ForeignKey("datasets.id"), nullable=True,
                                                   index=True)
    pinned_version: Mapped[int | None] = mapped_column(Integer, nullable=True)
    created_by_id: Mapped[str | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow, onupdate=utcnow)


class TaskEvaluator(Base):
    __tablename__ = "task_evaluators"

    task_id: Mapped[str] = mapped_column(ForeignKey("tasks.id", ondelete="CASCADE"), primary_key=True)
    evaluator_id: Mapped[str] = mapped_column(ForeignKey("evaluators.id", ondelete="RESTRICT"), primary_key=True,
                                              index=True)
    weight: Mapped[float] = mapped_column(Float, default=1.0)
    position: Mapped[int] = mapped_column(Integer, default=0)


class Run(Base):
    """One grading of a task. ``evaluators`` snapshots the specs graded, so a resumed run
    grades with what it started with even if an evaluator was edited meanwhile."""

    __tablename__ = "runs"

    id: Mapped[str] = mapped_column(String(36), primary_key=True, default=new_id)
    task_id: Mapped[str] = mapped_column(ForeignKey("tasks.id", ondelete="CASCADE"), index=True)
    dataset_version_id: Mapped[str | None] = mapped_column(ForeignKey("dataset_versions.id"),
                                                           nullable=True, index=True)
    status: Mapped[str] = mapped_column(String(16), default=RunState.QUEUED.value, index=True)
    evaluators: Mapped[list[dict[str, Any]]] = mapped_column(Json, default=list)
    """The snapshot as JSON: read it as ``snapshot``, write it with ``store.runs.create_run``."""
    total: Mapped[int] = mapped_column(Integer, default=0)
    done: Mapped[int] = mapped_column(Integer, default=0)
    summary: Mapped[dict[str, Any] | None] = mapped_column(Json, nullable=True)
    error: Mapped[str | None] = mapped_column(NulSafeText, nullable=True)
    error_id: Mapped[str | None] = mapped_column(String(32), nullable=True)
    """When the run failed on an internal error: the id its full report is logged under."""
    created_by_id: Mapped[str | None] = mapped_column(ForeignKey("users.id", ondelete="SET NULL"), nullable=True)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)

    @property
    def snapshot(self) -> list[RunEvaluator]:
        """The evaluators this run grades, as it snapshotted them when it started."""
        return read_snapshot(self.evaluators)


class EvaluationResult(Base):
    """One evaluator's verdict on one sample in one run; unique on that triple, so grading a
    sample again after a restart cannot add a second row."""

    __tablename__ = "evaluation_results"
    __table_args__ = (
        UniqueConstraint("run_id", "sample_id", "evaluator_id", name="uq_result_run_sample_evaluator"),
        Index("ix_results_run_status", "run_id", "status"),
        Index("ix_results_run_evaluator", "run_id", "evaluator_id"),
        Index("ix_results_run_index", "run_id", "sample_index"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"))
    sample_id: Mapped[str] = mapped_column(String(SAMPLE_ID_MAX))
    sample_index: Mapped[int] = mapped_column(Integer, default=0)
    evaluator_id: Mapped[str] = mapped_column(ForeignKey("evaluators.id", ondelete="RESTRICT"))
    evaluator_name: Mapped[str] = mapped_column(String(NAME_MAX))
    status: Mapped[str] = mapped_column(String(16))
    passed: Mapped[bool] = mapped_column(Boolean)
    score: Mapped[float | None] = mapped_column(Float, nullable=True)
    reason: Mapped[str | None] = mapped_column(NulSafeText, nullable=True)
    reason_code: Mapped[str | None] = mapped_column(String(64), nullable=True)
    """The code of the message ``reason`` says (``core.messages``), when the product wrote it."""
    reason_args: Mapped[dict[str, Any] | None] = mapped_column(Json, nullable=True)
    details: Mapped[dict[str, Any]] = mapped_column(Json, default=dict)
    error_code: Mapped[str | None] = mapped_column(String(32), nullable=True)
    latency_ms: Mapped[float] = mapped_column(Float, default=0.0)
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True), default=utcnow)


class SliceState(StrEnum):
    """Where a slice of a run stands in the queue."""

    PENDING = "pending"
    """Waiting for a server (never taken, or given back by a server that stopped)."""
    LEASED = "leased"
    """Being graded by ``holder`` until ``lease_until``, which its heartbeats push back; once
    that time passes without a heartbeat, any server may take the slice over."""
    DONE = "done"
    """Every (sample, evaluator) result of the slice is stored."""


class SliceKind(StrEnum):
    """What a slice of the queue grades."""

    RUN = "run"
    """Samples ``start`` <= index < ``stop`` of a task run."""
    ONLINE = "online"
    """A batch of one user's due online jobs (``online_jobs.slice_id``); no run."""


class RunSlice(Base):
    """The unit of the queue shared by all servers of the database, graded by one server at a
    time: a range of a run's samples (``start`` <= index < ``stop``) graded by every evaluator
    of the run, or (``kind`` online, no run) a batch of ``stop`` online jobs of one user.
    ``user_id`` is the run's creator or the rules' owner, so the queue serves users in turn
    across both kinds."""

    __tablename__ = "run_slices"
    __table_args__ = (
        Index("ix_slices_state_lease", "state", "lease_until"),
        Index("ix_slices_run_state", "run_id", "state"),
        Index("ix_slices_kind_user", "kind", "user_id", "claimed_at"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[str | None] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), nullable=True)
    user_id: Mapped[str] = mapped_column(String(36))
    kind: Mapped[str] = mapped_column(String(16), default=SliceKind.RUN.value, server_default=SliceKind.RUN.value)
    start: Mapped[int] = mapped_column(Integer)
    stop: Mapped[int] = mapped_column(Integer)
    state: Mapped[str] = mapped_column(String(16), default=SliceState.PENDING)
    holder: Mapped[str | None] = mapped_column(String(120), nullable=True)
    lease_until: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    claimed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    attempts: Mapped[int] = mapped_column(Integer, default=0)


def takeable_slice(now: datetime) -> ColumnElement[bool]:
    """A slice (of either kind) any server may take: pending (never taken, or given back) or
    leased past its lease. Also the claim's compare-and-set on the row, which makes one holder."""
    return or_(RunSlice.state == SliceState.PENDING,
               and_(RunSlice.state == SliceState.LEASED, RunSlice.lease_until < now))


class RunPause(Base):
    """An evaluator of a run that timed out on ``timeouts`` samples in a row and is not graded
    in that run while ``paused_at`` is set (``store.pauses``). A resume clears ``paused_at`` and
    sets ``counted_after`` to the run's last result id: only results after it count again."""

    __tablename__ = "run_pauses"

    run_id: Mapped[str] = mapped_column(ForeignKey("runs.id", ondelete="CASCADE"), primary_key=True)
    evaluator_id: Mapped[str] = mapped_column(String(36), primary_key=True)
    paused_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True), nullable=True)
    timeouts: Mapped[int] = mapped_column(Integer, default=0)
    counted_after: Mapped[int] = mapped_column(Integer, default=0)

class ChangeCounter(Base):
    """A counter per topic (``evaluators``, ``tokens``) that grows with every change of it, so
    every server of the database, on any host, drops what it keeps of that topic within one
    poll of the table."""

    __tablename__ = "change_counters"

    topic: Mapped[str] = mapped_column(String(32), primary_key=True)
    counter: Mapped[int] = mapped_column(BigInteger, default=0)


# The online evaluation tables live in a module of their own; they join ``Base``'s metadata here,
# so whatever reads the schema from this module (the migrations' environment, the schema test) sees them.
from assay.store import online_models as online_models  # noqa: E402
from assay.store import verdict_models as verdict_models  # noqa: E402
