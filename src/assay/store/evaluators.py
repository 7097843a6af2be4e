"""Evaluator rows: list, read, create, change, delete, and their versions (every create and
change is a new version, kept). Validation happens before these are called
(``store.translate.compile_row``); ownership is the API's concern."""

from __future__ import annotations

from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from assay.store import listing
from assay.store.clean import storable
from assay.store.listing import Window
from assay.store.models import Evaluator, EvaluatorVersion, Task, TaskEvaluator, is_row_id, utcnow

SORTABLE = {"name": Evaluator.name, "type": Evaluator.type, "createdAt": Evaluator.created_at,
            "updatedAt": Evaluator.updated_at}
"""The columns the list may be sorted by, by their API names."""


def list_evaluators(session: Session, evaluator_type: str | None = None, *,
                    presets_only: bool = False) -> list[Evaluator]:
    """Evaluators, presets first, then the oldest first; of one type when given."""
    return find_evaluators(session, evaluator_type, is_preset=True if presets_only else None)[0]


def find_evaluators(session: Session, evaluator_type: str | None = None, *, is_preset: bool | None = None,
                    language: str | None = None, owner_id: str | None = None,
                    window: Window | None = None) -> tuple[list[Evaluator], int]:
    """A page of evaluators (of one type, presets or not, code language and creator when given)
    whose name or description has ``window.q``'s words, sorted by one of ``SORTABLE``; without
    a sort key, presets first, then the oldest first. Also how many match in all."""
    query = select(Evaluator).order_by(Evaluator.is_preset.desc(), Evaluator.created_at, Evaluator.id)
    if evaluator_type is not None:
        query = query.where(Evaluator.type == evaluator_type)
    if is_preset is not None:
        query = query.where(Evaluator.is_preset.is_(is_preset))
    if language is not None:
        query = query.where(Evaluator.type == "code", Evaluator.config["language"].as_string() == language)
    if owner_id is not None:
        query = query.where(Evaluator.created_by_id == owner_id)
    window = window or Window()
    query = listing.search(query, window.q, [Evaluator.name, Evaluator.description])
    return listing.page(session, query, window, SORTABLE, Evaluator.id)


def get_evaluator(session: Session, evaluator_id: str) -> Evaluator | None:
    """The evaluator, or None (also for an id that is not a row id at all)."""
    return session.get(Evaluator, evaluator_id) if is_row_id(evaluator_id) else None


def create_evaluator(session: Session, *, name: str, description: str | None, evaluator_type: str,
                     config: dict[str, Any], created_by_id: str | None) -> Evaluator:
    """A new evaluator, and its version 1."""
    evaluator = Evaluator(name=storable(name), description=storable(description), type=evaluator_type,
                          config=config,  # its strings keep their NULs (store.clean)
                          is_preset=False, created_by_id=created_by_id, version=1)
    session.add(evaluator)
    session.flush()
    _keep_version(session, evaluator, created_by_id)
    return evaluator


def update_evaluator(session: Session, evaluator: Evaluator, author_id: str | None = None,
                     **fields: Any) -> Evaluator:
    """Set the given columns (name, description, type, config) and the update time: the
    evaluator's next version, saved by ``author_id``."""
    for key, value in fields.items():
        setattr(evaluator, key, value if key == "config" else storable(value))
    evaluator.updated_at = utcnow()
    evaluator.version = (latest_number(session, evaluator.id) or 0) + 1
    session.flush()
    _keep_version(session, evaluator, author_id)
    return evaluator


def _keep_version(session: Session, evaluator: Evaluator, author_id: str | None) -> None:
    session.add(EvaluatorVersion(evaluator_id=evaluator.id, number=evaluator.version, name=evaluator.name,
                                 description=evaluator.description, type=evaluator.type, config=evaluator.config,
                                 author_id=author_id, created_at=evaluator.updated_at))
    session.flush()


def latest_number(session: Session, evaluator_id: str) -> int | None:
    """The newest version's number (None before any: a preset)."""
    return session.scalar(select(func.max(EvaluatorVersion.number))
                          .where(EvaluatorVersion.evaluator_id == evaluator_id))


def list_versions(session: Session, evaluator_id: str) -> list[EvaluatorVersion]:
    """Every version of an evaluator, the newest first."""
    return list(session.scalars(select(EvaluatorVersion).where(EvaluatorVersion.evaluator_id == evaluator_id)
                                .order_by(EvaluatorVersion.number.desc())))


def get_version(session: Session, evaluator_id: str, number: int) -> EvaluatorVersion | None:
    return session.get(EvaluatorVersion, (evaluator_id, number)) if is_row_id(evaluator_id) else None


def tasks_using(session: Session, evaluator_id: str) -> list[tuple[str, str]]:
    """``(id, name)`` of the tasks an evaluator is attached to (it cannot be deleted while there are some)."""
    query = (select(Task.id, Task.name).join(TaskEvaluator, TaskEvaluator.task_id == Task.id)
             .where(TaskEvaluator.evaluator_id == evaluator_id).order_by(Task.name))
    return [(row.id, row.name) for row in session.execute(query)]


def delete_evaluator(session: Session, evaluator: Evaluator) -> None:
    session.delete(evaluator)
    session.flush()
