"""``/api/v1/runs``: a run's progress and summary, and its results (filtered, paged); their
export is ``run_export``."""

from __future__ import annotations

import re
from typing import Annotated, Any

from fastapi import APIRouter, Query
from sqlalchemy.orm import Session

from assay.core.messages import Phrase
from assay.core.result import Status
from assay.server.deps import CurrentUser, ServiceDep, SessionDep
from assay.server.errors import ApiError, not_found, shown
from assay.server.listing import LARGEST_ID
from assay.server.ownership import check_may_change, owner_name
from assay.server.schemas.common import ERROR_RESPONSES, Envelope, iso
from assay.server.schemas.tasks import PausedOut, ResultOut, ResultPage, RunOut
from assay.store import pauses
from assay.store import runs as rows
from assay.store import tasks as task_rows
from assay.store.models import ACTIVE_STATES, EvaluationResult, Run, RunState

router = APIRouter(prefix="/runs", tags=["runs"], responses=ERROR_RESPONSES)

NOT_YOURS = {verb: Phrase(f"api.run.not_yours_{verb}", "run {name} was started by {owner}; only they or an admin "
                                                       f"can {verb} it")
             for verb in ("cancel", "delete", "resume")}
NOT_ACTIVE = {"cancel": Phrase("api.run.not_active", "run {name} is {status}; only queued or running runs can be "
                                                     "cancelled"),
              "resume": Phrase("api.run.not_active_resume", "run {name} is {status}; only queued or running runs "
                                                            "can be resumed")}
NOT_PAUSED = Phrase("api.run.not_paused", "run {name} has no paused evaluator to resume")
STILL_ACTIVE = Phrase("api.run.active", "run {name} is {status}; cancel it before deleting it")
BAD_CURSOR = Phrase("api.run.bad_cursor", "query parameter cursor: {cursor} is not a nextCursor this API gave; "
                                          "start again without it")
CURSOR_AND_OFFSET = Phrase("api.run.cursor_and_offset", "query parameters cursor and offset: give one, not both")

def paused_out(session: Session, run: Run) -> list[PausedOut]:
    """The run's paused evaluators (``store.pauses``), named as its snapshot names them."""
    held = pauses.paused(session, run.id)
    names = {spec.evaluator_id: spec.name for spec in run.snapshot} if held else {}
    return [PausedOut(evaluator_id=p.evaluator_id, name=names.get(p.evaluator_id, p.evaluator_id),
                      paused_at=iso(p.paused_at), timeouts=p.timeouts) for p in held]


def run_out(run: Run, started_by: str | None = None, paused: list[PausedOut] | None = None) -> RunOut:
    """The run as answered; ``started_by``, the name of who started it, when the caller looked it up;
    ``paused``, its paused evaluators, when the caller read them."""
    progress = run.done / run.total if run.total else 1.0
    return RunOut(id=run.id, task_id=run.task_id, dataset_version_id=run.dataset_version_id,
                  status=RunState(run.status), total=run.total, done=run.done, progress=round(min(progress, 1.0), 4),
                  summary=run.summary, error=run.error, error_id=run.error_id, created_by_id=run.created_by_id,
                  started_by=started_by, paused=paused or [],
                  created_at=iso(run.created_at), started_at=iso(run.started_at), finished_at=iso(run.finished_at))


def result_out(result: EvaluationResult) -> ResultOut:
    return ResultOut(id=result.id, run_id=result.run_id, sample_id=result.sample_id, evaluator_id=result.evaluator_id,
                     evaluator_name=result.evaluator_name, status=Status(result.status),
                     passed=result.passed, score=result.score, reason=result.reason,
                     reason_code=result.reason_code, reason_args=result.reason_args, details=result.details or {},
                     error=result.error_code, latency_ms=result.latency_ms, created_at=iso(result.created_at))


@router.get("/{run_id}", response_model=Envelope[RunOut], summary="Get a run: progress and summary")
def get_run(run_id: str, session: SessionDep, _user: CurrentUser) -> Any:
    run = _found(session, run_id)
    return Envelope(data=run_out(run, owner_name(session, run.created_by_id), paused_out(session, run)))


@router.post("/{run_id}/resume", response_model=Envelope[RunOut],
             summary="Resume the evaluators paused in a run after timing out on sample after sample")
def resume_run(
    run_id: str, service: ServiceDep, session: SessionDep, user: CurrentUser,
    evaluator_id: Annotated[str | None, Query(alias="evaluatorId", description="Only this evaluator (default: "
                                                                               "every paused one).")] = None,
) -> Any:
    run = _found(session, run_id)
    name = task_rows.run_name(session, run)
    check_may_change(session, user, run.created_by_id, NOT_YOURS["resume"], name)
    if run.status not in ACTIVE_STATES:
        raise ApiError(409, NOT_ACTIVE["resume"](name=repr(name), status=run.status))
    if not pauses.resume(session, run_id, evaluator_id):
        raise ApiError(409, NOT_PAUSED(name=repr(name)))
    session.commit()
    service.worker.submit(run_id)
    session.refresh(run)
    return Envelope(data=run_out(run, owner_name(session, run.created_by_id), paused_out(session, run)))


@router.post("/{run_id}/cancel", response_model=Envelope[RunOut], summary="Cancel a queued or running run")
def cancel_run(run_id: str, service: ServiceDep, session: SessionDep, user: CurrentUser) -> Any:
    run = _found(session, run_id)
    check_may_change(session, user, run.created_by_id, NOT_YOURS["cancel"], task_rows.run_name(session, run))
    # Only from queued or running, in one statement: a run that finished meanwhile stays finished.
    # The row tells the grading process, whichever it is.
    if not rows.set_status(session, run_id, RunState.CANCELLED, only_from=ACTIVE_STATES):
        session.refresh(run)
        raise ApiError(409, NOT_ACTIVE["cancel"](name=repr(task_rows.run_name(session, run)), status=run.status))
    session.commit()
    service.worker.cancel(run_id)
    service.metrics.run_finished("cancelled")
    session.refresh(run)
    return Envelope(data=run_out(run, user.name if run.created_by_id == user.id else owner_name(session,
                                                                                              run.created_by_id)))


@router.delete("/{run_id}", response_model=Envelope[dict[str, str]],
               summary="Delete a finished run and its results")
def delete_run(run_id: str, session: SessionDep, user: CurrentUser) -> Any:
    run = _found(session, run_id)
    name = task_rows.run_name(session, run)
    check_may_change(session, user, run.created_by_id, NOT_YOURS["delete"], name)
    if run.status in ACTIVE_STATES:
        raise ApiError(409, STILL_ACTIVE(name=repr(name), status=run.status))
    task_rows.delete_run(session, run)
    session.commit()
    return Envelope(data={"id": run_id})


@router.get("/{run_id}/results", response_model=Envelope[ResultPage], summary="List a run's results")
def list_results(
    run_id: str, session: SessionDep, _user: CurrentUser,
    status: Annotated[Status | None, Query(description="Only results with this status.")] = None,
    evaluator_id: Annotated[str | None, Query(alias="evaluatorId", description="Only this evaluator's.")] = None,
    sample_id: Annotated[str | None, Query(alias="sampleId", description="Only this sample's.")] = None,
    failed_only: Annotated[bool, Query(alias="failedOnly", description="Only results that did not pass.")] = False,
    limit: Annotated[int, Query(ge=1, le=1000)] = 100,
    offset: Annotated[int, Query(ge=0, le=10_000_000, description="Rows to skip (slow deep into a large run: "
                                                                  "prefer cursor).")] = 0,
    cursor: Annotated[str | None, Query(max_length=64, description="The nextCursor of the page before: the page "
                                                                   "after it, as fast at any depth (no total).")]
    = None,
) -> Any:
    _found(session, run_id)
    query = rows.results_query(run_id, status=status, evaluator_id=evaluator_id, failed_only=failed_only,
                               sample_id=sample_id)
    total: int | None = None
    if cursor is None:
        items, total = rows.list_results(session, query, limit=limit, offset=offset)
    elif offset:
        raise ApiError(422, CURSOR_AND_OFFSET())
    else:
        items = rows.results_after(session, query, _cursor_key(cursor), limit=limit)
    after = _cursor_of(rows.result_key(items[-1])) if len(items) == limit else None
    return Envelope(data=ResultPage(items=[result_out(r) for r in items], total=total, limit=limit, offset=offset,
                                    next_cursor=after))


def _cursor_of(key: rows.ResultKey) -> str:
    """A page's end as the API gives it: ``<sample index>.<result id>`` (opaque to clients)."""
    return f"{key[0]}.{key[1]}"


def _cursor_key(cursor: str) -> rows.ResultKey:
    match = _CURSOR.fullmatch(cursor)
    if match is None or max(int(match[1]), int(match[2])) > LARGEST_ID:
        raise ApiError(422, BAD_CURSOR(cursor=shown(cursor)))
    return int(match[1]), int(match[2])


_CURSOR = re.compile(r"(\d{1,19})\.(\d{1,19})", re.ASCII)


def _found(session: Session, run_id: str) -> Run:
    run = rows.get_run(session, run_id)
    if run is None:
        raise not_found("run", run_id)
    return run
