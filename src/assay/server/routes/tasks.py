"""``/api/v1/tasks``: a dataset and the evaluators attached with weights; runs start here."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, File, Query, Response, UploadFile
from sqlalchemy.orm import Session

from assay.server.auth import Principal
from assay.server.datasets import rows_from_inline, rows_from_upload, upload_name
from assay.server.deps import CurrentUser, ServiceDep, SessionDep
from assay.server.errors import ApiError, evaluator_not_found, not_found
from assay.server.listing import TOTAL_HEADER, WindowDep, checked, owner_of, tell_total
from assay.server.routes.runs import run_out
from assay.server.schemas.common import ERROR_RESPONSES, Envelope, iso
from assay.server.schemas.tasks import RunOut, RunStatus, TaskCreate, TaskEvaluatorOut, TaskOut
from assay.store import evaluators as evaluator_rows
from assay.store import runs as run_rows
from assay.store import tasks as rows
from assay.store.models import Task

DatasetFile = Annotated[UploadFile, File(description="JSONL, JSON, CSV or TSV, named by its suffix.")]
router = APIRouter(prefix="/tasks", tags=["tasks"], responses=ERROR_RESPONSES)


def task_out(session: Session, task: Task) -> TaskOut:
    evaluators = [TaskEvaluatorOut(evaluator_id=e.id, name=e.name, type=e.type, weight=w)
                  for e, w in rows.task_evaluators(session, task.id)]
    return TaskOut(id=task.id, name=task.name, description=task.description, dataset_name=task.dataset_name,
                   sample_count=len(task.dataset or []), evaluators=evaluators, created_by_id=task.created_by_id,
                   created_at=iso(task.created_at), updated_at=iso(task.updated_at))


@router.post("", response_model=Envelope[TaskOut], summary="Create a task")
def create_task(body: TaskCreate, session: SessionDep, user: CurrentUser) -> Any:
    links: list[tuple[str, float]] = []
    for i, link in enumerate(body.evaluators):
        if evaluator_rows.get_evaluator(session, link.evaluator_id) is None:
            raise evaluator_not_found(link.evaluator_id)
        if any(link.evaluator_id == seen for seen, _ in links):
            raise ApiError(422, f"evaluators[{i}].evaluatorId: {link.evaluator_id!r} is attached twice")
        links.append((link.evaluator_id, link.weight))
    dataset = rows_from_inline(body.dataset.rows) if body.dataset is not None else []
    task = rows.create_task(session, name=body.name, description=body.description,
                            dataset_name=body.dataset.name if body.dataset is not None else None,
                            rows=dataset, evaluators=links, created_by_id=user.id)
    session.commit()
    return Envelope(data=task_out(session, task))


@router.get("", response_model=Envelope[list[TaskOut]], summary="List tasks",
            description=f"Searched, sorted and paged by the query parameters; the total is in {TOTAL_HEADER}.")
def list_tasks(session: SessionDep, user: CurrentUser, response: Response, window: WindowDep,
               owner: Annotated[str | None, Query(max_length=200, description="Only this user's (me: yours).")]
               = None) -> Any:
    found, total = rows.find_tasks(session, owner_id=owner_of(session, user, owner),
                                   window=checked(window, rows.TASK_SORTABLE))
    tell_total(response, total)
    return Envelope(data=[task_out(session, t) for t in found])


@router.get("/{task_id}", response_model=Envelope[TaskOut], summary="Get a task")
def get_task(task_id: str, session: SessionDep, _user: CurrentUser) -> Any:
    return Envelope(data=task_out(session, _found(session, task_id)))


@router.put("/{task_id}/dataset", response_model=Envelope[TaskOut], summary="Upload the task's dataset")
def upload_dataset(task_id: str, session: SessionDep, user: CurrentUser, file: DatasetFile) -> Any:
    task = _changeable(session, task_id, user)
    name = upload_name(file.filename)
    dataset = rows_from_upload(name, file.file)
    rows.set_dataset(session, task, name, dataset)
    session.commit()
    return Envelope(data=task_out(session, task))


@router.delete("/{task_id}", response_model=Envelope[dict[str, str]], summary="Delete a task and its runs")
def delete_task(task_id: str, session: SessionDep, user: CurrentUser) -> Any:
    task = _changeable(session, task_id, user)
    if any(r.status in run_rows.ACTIVE for r in run_rows.list_runs(session, task_id)):
        raise ApiError(409, f"task {task_id!r} has a run in progress; cancel it first")
    rows.delete_task(session, task)
    session.commit()
    return Envelope(data={"id": task_id})


@router.post("/{task_id}/runs", response_model=Envelope[RunOut], summary="Start a run of the task")
def start_run(task_id: str, service: ServiceDep, session: SessionDep, user: CurrentUser) -> Any:
    task = _changeable(session, task_id, user)
    samples = len(task.dataset or [])
    if samples == 0:
        raise ApiError(422, f"task {task_id!r} has no dataset rows: add rows or upload a file first")
    snapshot = [{"evaluatorId": e.id, "name": e.name, "type": e.type, "config": e.config, "weight": w}
                for e, w in rows.task_evaluators(session, task_id)]
    run = run_rows.create_run(session, task_id=task_id, evaluators=snapshot, samples=samples,
                              created_by_id=user.id, slice_size=service.worker.slice_size(snapshot))
    session.commit()
    service.worker.submit(run.id)
    return Envelope(data=run_out(run))


@router.get("/{task_id}/runs", response_model=Envelope[list[RunOut]], summary="List the task's runs",
            description=f"Filtered, sorted and paged by the query parameters; the total is in {TOTAL_HEADER}.")
def list_runs(task_id: str, session: SessionDep, _user: CurrentUser, response: Response, window: WindowDep,
              status: Annotated[RunStatus | None, Query(description="Only runs in this state.")] = None) -> Any:
    _found(session, task_id)
    found, total = run_rows.find_runs(session, task_id, status=status, window=checked(window, run_rows.RUN_SORTABLE))
    tell_total(response, total)
    return Envelope(data=[run_out(r) for r in found])


def _found(session: Session, task_id: str) -> Task:
    task = rows.get_task(session, task_id)
    if task is None:
        raise not_found("task", task_id)
    return task


def _changeable(session: Session, task_id: str, user: Principal) -> Task:
    task = _found(session, task_id)
    if not user.may_change(task.created_by_id):
        raise ApiError(403, f"task {task_id!r} belongs to another user; only its creator or an admin can change it")
    return task
