"""Task rows: the dataset a task grades and the evaluators attached with weights."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import delete, select, tuple_
from sqlalchemy.orm import Session

from assay.store import listing
from assay.store.clean import storable
from assay.store.datasets import latest_versions
from assay.store.models import DatasetVersion, Evaluator, Run, Task, TaskEvaluator, is_row_id, utcnow


def create_task(session: Session, *, name: str, description: str | None, dataset_id: str | None,
                evaluators: Sequence[tuple[str, float]], created_by_id: str | None,
                pinned_version: int | None = None) -> Task:
    """A task grading a dataset (or none yet; its version ``pinned_version``, else the newest)
    with ``(evaluator id, weight)`` links, in order."""
    task = Task(name=storable(name), description=storable(description), dataset_id=dataset_id,
                created_by_id=created_by_id, pinned_version=pinned_version)
    session.add(task)
    session.flush()
    set_evaluators(session, task, evaluators)
    return task


def set_evaluators(session: Session, task: Task, evaluators: Sequence[tuple[str, float]]) -> None:
    session.execute(delete(TaskEvaluator).where(TaskEvaluator.task_id == task.id))
    for position, (evaluator_id, weight) in enumerate(evaluators):
        session.add(TaskEvaluator(task_id=task.id, evaluator_id=evaluator_id, weight=weight, position=position))
    session.flush()


def update_task(session: Session, task: Task, *, evaluators: Sequence[tuple[str, float]] | None = None,
                pinned_version: int | None, **fields: str | None) -> Task:
    """Set the given columns (name, description, dataset_id), the pin (None: none), the
    evaluator links when given, and the update time."""
    for key, value in fields.items():
        setattr(task, key, storable(value))
    task.pinned_version = pinned_version
    if evaluators is not None:
        set_evaluators(session, task, evaluators)
    task.updated_at = utcnow()
    session.flush()
    return task


def set_dataset(session: Session, task: Task, dataset_id: str | None) -> Task:
    task.dataset_id = dataset_id
    task.updated_at = utcnow()
    session.flush()
    return task


def graded_versions(session: Session, tasks: Sequence[Task]) -> dict[str, DatasetVersion]:
    """The version each task's next run grades (the one it pins, else its dataset's newest
    ready one), by task id; tasks without a dataset, without an upload yet, or pinning a
    version that is gone are left out. Reads no rows."""
    latest = latest_versions(session, sorted({t.dataset_id for t in tasks
                                              if t.dataset_id is not None and t.pinned_version is None}))
    pins = {(t.dataset_id, t.pinned_version) for t in tasks if t.dataset_id is not None and t.pinned_version}
    pinned = {(v.dataset_id, v.number): v for v in session.scalars(
        select(DatasetVersion).where(tuple_(DatasetVersion.dataset_id, DatasetVersion.number).in_(pins),
                                     DatasetVersion.ready.is_(True)))} if pins else {}
    found = {t.id: pinned.get((t.dataset_id, t.pinned_version)) if t.pinned_version else latest.get(t.dataset_id or "")
             for t in tasks if t.dataset_id is not None}
    return {task_id: version for task_id, version in found.items() if version is not None}


def get_task(session: Session, task_id: str) -> Task | None:
    """The task, or None (also for an id that is not a row id at all)."""
    return session.get(Task, task_id) if is_row_id(task_id) else None


def list_tasks(session: Session) -> list[Task]:
    return list(session.scalars(select(Task).order_by(Task.created_at, Task.id)))


def task_evaluators(session: Session, task_id: str) -> list[tuple[Evaluator, float]]:
    """The evaluators attached to a task with their weights, in the order given."""
    query = (select(Evaluator, TaskEvaluator.weight).join(TaskEvaluator, TaskEvaluator.evaluator_id == Evaluator.id)
             .where(TaskEvaluator.task_id == task_id).order_by(TaskEvaluator.position))
    return [(evaluator, weight) for evaluator, weight in session.execute(query).all()]


def delete_task(session: Session, task: Task) -> None:
    """Delete a task with its links, runs and results (the foreign keys cascade)."""
    session.delete(task)
    session.flush()


def run_name(session: Session, run: Run) -> str:
    """How a message names a run: its task's name and when it started ("评测 (2026-12-01 10:30)")."""
    task = session.get(Task, run.task_id)
    return f"{task.name if task else run.task_id} ({run.created_at:%Y-%m-%d %H:%M})"


def delete_run(session: Session, run: Run) -> None:
    """Delete a finished run with its results and slices (the foreign keys cascade)."""
    session.delete(run)
    session.flush()


TASK_SORTABLE = {"name": Task.name, "createdAt": Task.created_at, "updatedAt": Task.updated_at}
"""The columns the task list may be sorted by, by their API names."""


def find_tasks(session: Session, *, owner_id: str | None = None,
               window: listing.Window | None = None) -> tuple[list[Task], int]:
    """A page of tasks (one user's when given) whose name or description has ``window.q``'s
    words, sorted by one of ``TASK_SORTABLE`` (by default, the oldest first), and how many match."""
    query = select(Task).order_by(Task.created_at, Task.id)
    if owner_id is not None:
        query = query.where(Task.created_by_id == owner_id)
    window = window or listing.Window()
    query = listing.search(query, window.q, [Task.name, Task.description])
    return listing.page(session, query, window, TASK_SORTABLE, Task.id)
