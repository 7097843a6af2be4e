"""``/api/v1/evaluators/{id}/versions``: every save of an evaluator, kept. Anyone signed in
reads them (as they read the evaluator); restoring one is a ``PUT`` of its fields, which saves
the next version. A preset, never saved, has its row as its only version."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path
from sqlalchemy.orm import Session

from assay.core.messages import Phrase
from assay.server.deps import CurrentUser, SessionDep
from assay.server.errors import ApiError, evaluator_not_found
from assay.server.schemas.common import ERROR_RESPONSES, Envelope, iso
from assay.server.schemas.evaluators import EvaluatorVersionOut
from assay.store import evaluators as rows
from assay.store import users
from assay.store.models import Evaluator, EvaluatorVersion

router = APIRouter(prefix="/evaluators", tags=["evaluators"], responses=ERROR_RESPONSES)
NO_SUCH_VERSION = Phrase("api.evaluator.no_such_version", "evaluator {name} has no version {number}")


def version_out(version: EvaluatorVersion | Evaluator, author: str | None, current: int) -> EvaluatorVersionOut:
    if isinstance(version, Evaluator):  # a preset: its row
        return EvaluatorVersionOut(number=version.version, name=version.name, description=version.description,
                                   type=version.type, config=version.config, author=None, author_id=None,
                                   created_at=iso(version.updated_at), current=True)
    return EvaluatorVersionOut(number=version.number, name=version.name, description=version.description,
                               type=version.type, config=version.config, author=author, author_id=version.author_id,
                               created_at=iso(version.created_at), current=version.number == current)


def _evaluator(session: Session, evaluator_id: str) -> Evaluator:
    evaluator = rows.get_evaluator(session, evaluator_id)
    if evaluator is None:
        raise evaluator_not_found(evaluator_id)
    return evaluator


@router.get("/{evaluator_id}/versions", response_model=Envelope[list[EvaluatorVersionOut]],
            summary="List an evaluator's versions, the newest first")
def list_versions(evaluator_id: str, session: SessionDep, _user: CurrentUser) -> Any:
    evaluator = _evaluator(session, evaluator_id)
    found: list[Any] = rows.list_versions(session, evaluator.id) or [evaluator]
    authors = users.names(session, {v.author_id for v in found if getattr(v, "author_id", None)})
    return Envelope(data=[version_out(v, authors.get(getattr(v, "author_id", None) or ""), evaluator.version)
                          for v in found])


@router.get("/{evaluator_id}/versions/{number}", response_model=Envelope[EvaluatorVersionOut],
            summary="Get one version of an evaluator: what it was, who saved it, when")
def get_version(evaluator_id: str, number: Annotated[int, Path(ge=1, le=2**31 - 1)], session: SessionDep,
                _user: CurrentUser) -> Any:
    evaluator = _evaluator(session, evaluator_id)
    version: Any = rows.get_version(session, evaluator.id, number)
    if version is None and evaluator.is_preset and number == evaluator.version:
        version = evaluator
    if version is None:
        raise ApiError(404, NO_SUCH_VERSION(name=repr(evaluator.name), number=number))
    author_id = getattr(version, "author_id", None)
    return Envelope(data=version_out(version, users.names(session, [author_id]).get(author_id) if author_id else None,
                                     evaluator.version))
