"""Task rows: a dataset (normalised sample rows) and the evaluators attached with weights."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from sqlalchemy import delete, select, text
from sqlalchemy.orm import Session

from assay.store import listing
from assay.store.clean import storable
from assay.store.models import Evaluator, Task, TaskEvaluator, is_row_id, utcnow


def create_task(session: Session, *, name: str, description: str | None, dataset_name: str | None,
                rows: list[dict[str, Any]], evaluators: Sequence[tuple[str, float]],
                created_by_id: str | None) -> Task:
    """A task with its dataset rows and ``(evaluator id, weight)`` links, in order."""
    task = Task(name=storable(name), description=storable(description), dataset_name=storable(dataset_name),
                dataset=storable(rows),
                created_by_id=created_by_id)
    session.add(task)
    session.flush()
    set_evaluators(session, task, evaluators)
    return task


def set_evaluators(session: Session, task: Task, evaluators: Sequence[tuple[str, float]]) -> None:
    session.execute(delete(TaskEvaluator).where(TaskEvaluator.task_id == task.id))
    for position, (evaluator_id, weight) in enumerate(evaluators):
        session.add(TaskEvaluator(task_id=task.id, evaluator_id=evaluator_id, weight=weight, position=position))
    session.flush()


def set_dataset(session: Session, task: Task, name: str | None, rows: list[dict[str, Any]]) -> Task:
    task.dataset = storable(rows)
    task.dataset_name = storable(name)
    task.updated_at = utcnow()
    session.flush()
    return task


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


def dataset_rows(session: Session, task_id: str, start: int, stop: int) -> list[dict[str, Any]]:
    """Rows ``start`` <= index < ``stop`` of a task's dataset, read by the database from the JSON
    column so that only these rows reach this process (a run's slice reads its own rows)."""
    if session.get_bind().dialect.name == "postgresql":
        query = text("SELECT jsonb_path_query_array(dataset, CAST(:path AS jsonpath)) FROM tasks WHERE id = :id")
        found = session.execute(query, {"id": task_id, "path": f"$[{start} to {stop - 1}]"}).scalar()
        return list(found or [])
    query = text("SELECT value FROM tasks, json_each(tasks.dataset) WHERE tasks.id = :id "
                 "AND CAST(key AS INTEGER) >= :start AND CAST(key AS INTEGER) < :stop ORDER BY CAST(key AS INTEGER)")
    return [json.loads(value) for value in session.scalars(query, {"id": task_id, "start": start, "stop": stop})]
