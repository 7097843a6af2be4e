"""Datasets as versioned resources: ``datasets``, ``dataset_versions`` and ``dataset_rows``;
a task names a dataset, a run the version it graded; a failed run keeps an error id.

The rows a task held inline (``tasks.dataset``, one JSON value) move into a dataset of the
task's name, version 1, one row per sample, and the task's runs are marked as having graded
that version. Literal data only: nothing here imports assay.

Revision ID: 0003
Revises: 0002q
Create Date: 2026-11-26
"""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision = "0003"
down_revision = "0002q"
branch_labels = None
depends_on = None

Json = sa.JSON().with_variant(postgresql.JSONB(), "postgresql")
_BATCH = 1000


def _stamp(name: str) -> sa.Column:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=False)


def upgrade() -> None:
    op.create_table(
        "datasets",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("description", sa.Text, nullable=True),
        sa.Column("created_by_id", sa.String(36), sa.ForeignKey("users.id", ondelete="SET NULL"), nullable=True),
        _stamp("created_at"),
        _stamp("updated_at"),
    )
    op.create_table(
        "dataset_versions",
        sa.Column("id", sa.String(36), primary_key=True),
        sa.Column("dataset_id", sa.String(36), sa.ForeignKey("datasets.id", ondelete="CASCADE"), nullable=False,
                  index=True),
        sa.Column("number", sa.Integer, nullable=False),
        sa.Column("ready", sa.Boolean, nullable=False),
        sa.Column("source_name", sa.String(300), nullable=True),
        sa.Column("format", sa.String(16), nullable=False),
        sa.Column("row_count", sa.Integer, nullable=False),
        sa.Column("size_bytes", sa.BigInteger, nullable=False),
        sa.Column("columns", Json, nullable=False),
        sa.Column("created_by_id", sa.String(36), sa.ForeignKey("users.id", ondelete="SET NULL"), nullable=True),
        _stamp("created_at"),
        sa.UniqueConstraint("dataset_id", "number", name="uq_dataset_version_number"),
    )
    op.create_table(
        "dataset_rows",
        sa.Column("version_id", sa.String(36), sa.ForeignKey("dataset_versions.id", ondelete="CASCADE"),
                  primary_key=True),
        sa.Column("position", sa.Integer, primary_key=True),
        sa.Column("sample_id", sa.String(300), nullable=False),
        sa.Column("data", sa.Text, nullable=False),
        sa.UniqueConstraint("version_id", "sample_id", name="uq_dataset_row_sample"),
        sqlite_with_rowid=False,
    )
    # Plain SQL both engines take: SQLite adds a column with its foreign key in place (Alembic's
    # add_column would need a copy of the table, whose drop cascades into runs and results).
    # No ON DELETE: a dataset or version a task or run names cannot be deleted.
    op.execute("ALTER TABLE tasks ADD COLUMN dataset_id VARCHAR(36) REFERENCES datasets (id)")
    op.create_index("ix_tasks_dataset_id", "tasks", ["dataset_id"])
    op.execute("ALTER TABLE runs ADD COLUMN dataset_version_id VARCHAR(36) "
               "REFERENCES dataset_versions (id)")
    op.create_index("ix_runs_dataset_version_id", "runs", ["dataset_version_id"])
    op.add_column("runs", sa.Column("error_id", sa.String(32), nullable=True))
    _move_inline_rows()
    op.drop_column("tasks", "dataset")
    op.drop_column("tasks", "dataset_name")


def _move_inline_rows() -> None:
    """Each task's inline rows become version 1 of a dataset named after the task (or its
    dataset's name), task by task: one task's rows were one JSON value already."""
    bind = op.get_bind()
    tasks = sa.table("tasks", sa.column("id", sa.String), sa.column("name", sa.String),
                     sa.column("dataset_name", sa.String), sa.column("dataset", Json),
                     sa.column("created_by_id", sa.String), sa.column("dataset_id", sa.String))
    datasets = sa.table("datasets", *(sa.column(c) for c in ("id", "name", "description", "created_by_id",
                                                            "created_at", "updated_at")))
    versions = sa.table("dataset_versions", *(sa.column(c) for c in (
        "id", "dataset_id", "number", "ready", "source_name", "format", "row_count", "size_bytes", "created_by_id",
        "created_at")), sa.column("columns", Json))
    rows_table = sa.table("dataset_rows", *(sa.column(c) for c in ("version_id", "position", "sample_id", "data")))
    runs = sa.table("runs", sa.column("task_id", sa.String), sa.column("dataset_version_id", sa.String))
    task_ids = [r[0] for r in bind.execute(sa.select(tasks.c.id).order_by(tasks.c.id))]
    for task_id in task_ids:
        task = bind.execute(sa.select(tasks).where(tasks.c.id == task_id)).one()
        rows = task.dataset if isinstance(task.dataset, list) else []
        if not rows:
            continue
        now = datetime.now(UTC)
        dataset_id, version_id = str(uuid.uuid4()), str(uuid.uuid4())
        bind.execute(datasets.insert().values(id=dataset_id, name=(task.dataset_name or task.name)[:200],
                                              description=None, created_by_id=task.created_by_id,
                                              created_at=now, updated_at=now))
        bind.execute(versions.insert().values(
            id=version_id, dataset_id=dataset_id, number=1, ready=True, source_name=task.dataset_name,
            format="inline", row_count=len(rows), size_bytes=0, columns=[], created_by_id=task.created_by_id,
            created_at=now))
        columns: dict[str, None] = {}
        size = 0
        for start in range(0, len(rows), _BATCH):
            batch = []
            for position, row in enumerate(rows[start:start + _BATCH], start):
                columns.update(dict.fromkeys(row))
                data = json.dumps(row, ensure_ascii=False, separators=(",", ":"))
                size += len(data.encode("utf-8"))
                batch.append({"version_id": version_id, "position": position, "sample_id": str(row.get("id")),
                              "data": data})
            bind.execute(rows_table.insert(), batch)
        bind.execute(versions.update().where(versions.c.id == version_id)
                     .values(size_bytes=size, columns=list(columns)[:200]))
        bind.execute(tasks.update().where(tasks.c.id == task_id).values(dataset_id=dataset_id))
        bind.execute(runs.update().where(runs.c.task_id == task_id).values(dataset_version_id=version_id))


def downgrade() -> None:
    raise NotImplementedError("revision 0003 moved every task's rows into dataset tables and cannot be undone "
                              "in place: restore the backup taken before the upgrade")
