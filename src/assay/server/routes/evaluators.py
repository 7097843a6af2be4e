"""``/api/v1/evaluators``: the product specification's evaluator API (section 五).

Thin: bodies are validated by their models, configs by the engine (``Grading.validate``),
rows are read and written through ``assay.store``; this module only decides who may do what.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Response
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool

from assay.core.errors import SpecError
from assay.core.grader import Grader
from assay.core.messages import Phrase
from assay.server import trial
from assay.server.auth import Principal
from assay.server.deps import CurrentUser, ServiceDep, SessionDep
from assay.server.errors import EVALUATOR_EXECUTION_FAILED, NOT_NULL, ApiError, blocked, evaluator_not_found
from assay.server.listing import TOTAL_HEADER, OwnerQuery, WindowDep, checked, owner_of, tell_total
from assay.server.ownership import check_may_change, owner_name
from assay.server.schemas.common import ERROR_RESPONSES, Envelope, iso
from assay.server.schemas.evaluators import (
    EvaluatorCreate,
    EvaluatorDetail,
    EvaluatorSummary,
    EvaluatorType,
    EvaluatorUpdate,
    Language,
    PresetOut,
    TestRequest,
    TestResult,
)
from assay.server.service import Service
from assay.store import evaluators as rows
from assay.store import users
from assay.store.models import Evaluator
from assay.store.translate import stored_config

CONFIG_REQUIRED = Phrase("api.evaluator.config_required", "config: required when type changes")
IN_USE = Phrase("api.evaluator.in_use", "evaluator {name} is attached to task(s) {tasks}; delete those tasks or "
                                        "detach it from them first")
PRESET = {verb: Phrase(f"api.evaluator.preset_{verb}",
                       f"evaluator {{name}} is a preset: presets are read-only and cannot be {verb}")
          for verb in ("updated", "deleted")}
NOT_YOURS = {verb: Phrase(f"api.evaluator.not_yours_{verb}", "evaluator {name} belongs to {owner}; only its "
                                                             f"creator or an admin can have it {verb} (copy it as "
                                                             "yours to change it)")
             for verb in ("updated", "deleted")}
STALE_CONFIG = Phrase("api.evaluator.stale_config", "evaluator execution failed: its stored config is no longer "
                                                     "valid here ({problem}); update it")

router = APIRouter(prefix="/evaluators", tags=["evaluators"], responses=ERROR_RESPONSES)


def summary(evaluator: Evaluator, owner: str | None = None) -> EvaluatorSummary:
    language = evaluator.config.get("language") if evaluator.type == "code" else None
    return EvaluatorSummary(id=evaluator.id, name=evaluator.name, description=evaluator.description,
                            type=evaluator.type, is_preset=evaluator.is_preset, language=language, owner=owner,
                            created_at=iso(evaluator.created_at), updated_at=iso(evaluator.updated_at))


def detail(session: Session, evaluator: Evaluator) -> EvaluatorDetail:
    owner = owner_name(session, evaluator.created_by_id)
    return EvaluatorDetail(**summary(evaluator, owner).model_dump(), config=evaluator.config,
                           created_by_id=evaluator.created_by_id, version=evaluator.version)


@router.get("", response_model=Envelope[list[EvaluatorSummary]], summary="List evaluators",
            description="Filtered, searched, sorted and paged by the query parameters; the number of "
                        f"matches in all is in the {TOTAL_HEADER} header.")
def list_evaluators(session: SessionDep, user: CurrentUser, response: Response, window: WindowDep,
                    type: Annotated[EvaluatorType | None, Query(description="Only this type.")] = None,
                    language: Annotated[Language | None, Query(description="Only code evaluators in this "
                                                                           "language.")] = None,
                    owner: OwnerQuery = None,
                    is_preset: Annotated[bool | None, Query(alias="isPreset", description="Only the built-in "
                                                            "presets (true), or only the others (false).")] = None,
                    ) -> Any:
    found, total = rows.find_evaluators(session, type, is_preset=is_preset, language=language,
                                        owner_id=owner_of(session, user, owner), window=checked(window, rows.SORTABLE))
    tell_total(response, total)
    owners = users.names(session, {e.created_by_id for e in found if e.created_by_id})
    return Envelope(data=[summary(e, owners.get(e.created_by_id or "")) for e in found])


@router.get("/presets", response_model=Envelope[list[PresetOut]], summary="List the preset evaluators")
def list_presets(session: SessionDep, _user: CurrentUser) -> Any:
    presets = rows.list_evaluators(session, "preset", presets_only=True)
    return Envelope(data=[PresetOut(id=e.id, name=e.name, description=e.description or "", config=e.config)
                          for e in presets])


@router.post("", response_model=Envelope[EvaluatorDetail], summary="Create an evaluator")
def create_evaluator(body: EvaluatorCreate, service: ServiceDep, session: SessionDep, user: CurrentUser) -> Any:
    config = _checked_config(service, body.type, body.config, body.name)
    evaluator = rows.create_evaluator(session, name=body.name, description=body.description,
                                      evaluator_type=body.type, config=config, created_by_id=user.id)
    session.commit()
    return Envelope(data=detail(session, evaluator))


@router.get("/{evaluator_id}", response_model=Envelope[EvaluatorDetail], summary="Get an evaluator")
def get_evaluator(evaluator_id: str, session: SessionDep, _user: CurrentUser) -> Any:
    return Envelope(data=detail(session, _found(session, evaluator_id)))


@router.put("/{evaluator_id}", response_model=Envelope[EvaluatorDetail], summary="Update an evaluator")
def update_evaluator(evaluator_id: str, body: EvaluatorUpdate, service: ServiceDep, session: SessionDep,
                     user: CurrentUser) -> Any:
    evaluator = _changeable(session, evaluator_id, user, "updated")
    changes: dict[str, Any] = body.model_dump(exclude_unset=True, by_alias=False)
    for field in ("name", "type", "config"):
        if field in changes and changes[field] is None:
            raise ApiError(422, NOT_NULL(field=field))
    if changes.get("type") not in (None, evaluator.type) and body.config is None:
        raise ApiError(422, CONFIG_REQUIRED())
    evaluator_type = changes.get("type") or evaluator.type
    changes["type"] = evaluator_type
    if body.config is not None:
        changes["config"] = _checked_config(service, evaluator_type, body.config, changes.get("name") or evaluator.name)
    else:
        changes.pop("config", None)
    rows.update_evaluator(session, evaluator, author_id=user.id, **changes)
    session.commit()
    service.grading.forget(evaluator_id)
    return Envelope(data=detail(session, evaluator))


@router.delete("/{evaluator_id}", response_model=Envelope[dict[str, str]], summary="Delete an evaluator")
def delete_evaluator(evaluator_id: str, service: ServiceDep, session: SessionDep, user: CurrentUser) -> Any:
    evaluator = _changeable(session, evaluator_id, user, "deleted")
    tasks = rows.tasks_using(session, evaluator_id)
    if tasks:
        raise blocked(409, IN_USE(name=repr(evaluator.name), tasks=", ".join(repr(name) for _, name in tasks[:5])),
                      "task", tasks)
    rows.delete_evaluator(session, evaluator)
    session.commit()
    service.grading.forget(evaluator_id)
    return Envelope(data={"id": evaluator_id})


@router.post("/{evaluator_id}/test", response_model=Envelope[TestResult], summary="Test an evaluator on one sample")
async def test_evaluator(evaluator_id: str, body: TestRequest, service: ServiceDep, user: CurrentUser) -> Any:
    # The hot request: when the grader is cached, the token too and the preset cheap, the fast
    # path (server/fast_test.py) answers it before the framework; this route serves the rest.
    grading = service.grading
    grader = grading.cached(evaluator_id)
    if grader is None:
        grader = await run_in_threadpool(_load_grader, service, evaluator_id)
    return trial.answer(*await trial.grade(grading, grader, trial.sample_of(body), user.id))


def _load_grader(service: Service, evaluator_id: str) -> Grader[Any]:
    """Read the row and build its grader (blocking: from a worker thread); the session is
    released before grading, which may take seconds."""
    generation = service.grading.generation()
    with service.database.session() as session:
        evaluator = _found(session, evaluator_id)
    return _grader(service, evaluator, generation)


def _found(session: Session, evaluator_id: str) -> Evaluator:
    evaluator = rows.get_evaluator(session, evaluator_id)
    if evaluator is None:
        raise evaluator_not_found(evaluator_id)
    return evaluator


def _changeable(session: Session, evaluator_id: str, user: Principal,
                verb: Literal["updated", "deleted"]) -> Evaluator:
    evaluator = _found(session, evaluator_id)
    if evaluator.is_preset:
        raise ApiError(403, PRESET[verb](name=repr(evaluator.name)))
    check_may_change(session, user, evaluator.created_by_id, NOT_YOURS[verb], evaluator.name)
    return evaluator


def _checked_config(service: Service, evaluator_type: str, config: dict[str, Any], name: str) -> dict[str, Any]:
    """The config as stored once the engine accepts it: the specification's shape holding the
    validated config, every default filled in (``store.translate.stored_config``)."""
    trial.check_code_size(service.settings, evaluator_type, config)
    return stored_config(service.grading.validate(evaluator_type, config, name))


def _grader(service: Service, evaluator: Evaluator, generation: int) -> Grader[Any]:
    try:
        return service.grading.grader(evaluator, generation)
    except SpecError as exc:
        raise ApiError(500, STALE_CONFIG(problem=str(exc)), EVALUATOR_EXECUTION_FAILED) from None
