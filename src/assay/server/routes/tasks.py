"""``/api/v1/tasks``: a dataset and the evaluators attached with weights; runs start here."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, File, Query, Response, UploadFile
from sqlalchemy.orm import Session

from assay.core.messages import Phrase
from assay.server.auth import Principal
from assay.server.deps import CurrentUser, ServiceDep, SessionDep
from assay.server.errors import NOT_NULL, ApiError, evaluator_not_found, not_found
from assay.server.listing import TOTAL_HEADER, OwnerQuery, WindowDep, checked, owner_of, tell_total
from assay.server.ownership import check_may_change, owner_name
from assay.server.routes.runs import run_out
from assay.server.schemas.common import ERROR_RESPONSES, Envelope, iso
from assay.server.schemas.tasks import (
    RunOut,
    RunStatus,
    TaskCreate,
    TaskEvaluatorIn,
    TaskEvaluatorOut,
    TaskOut,
    TaskUpdate,
)
from assay.service import datasets as ingest
from assay.store import datasets as dataset_rows
from assay.store import evaluators as evaluator_rows
from assay.store import runs as run_rows
from assay.store import tasks as rows
from assay.store import users
from assay.store.models import ACTIVE_STATES, NAME_MAX, DatasetVersion, Task
from assay.store.snapshot import RunEvaluator

DatasetFile = Annotated[UploadFile, File(description="JSONL, JSON, CSV, TSV or Parquet, named by its suffix.")]
router = APIRouter(prefix="/tasks", tags=["tasks"], responses=ERROR_RESPONSES)

TWICE = Phrase("api.task.evaluator_twice", "evaluators[{index}].evaluatorId: {id} is attached twice")
BOTH_DATASETS = Phrase("api.task.both_datasets", "dataset and datasetId: give one, the rows or the id of a dataset")
EVALUATORS_NULL = Phrase("api.task.evaluators_null", "evaluators: may not be null (leave it out to keep the "
                                                     "attached ones)")
RUNNING = Phrase("api.task.running", "task {name} has a run in progress; cancel it first")
NO_ROWS = Phrase("api.task.no_rows", "task {name} has no dataset rows: add rows or upload a file first")
NO_VERSION = Phrase("api.task.no_version", "pinnedVersion: dataset {dataset} has no ready version {number}")
PIN_WITHOUT_DATASET = Phrase("api.task.pin_without_dataset", "pinnedVersion: the task has no dataset to pin a "
                                                              "version of")
PIN_GONE = Phrase("api.task.pin_gone", "task {name} pins version {number} of its dataset, which no longer exists: "
                                       "pin another version, or none (pinnedVersion: null)")
NOT_YOURS = Phrase("api.task.not_yours", "task {name} belongs to {owner}; only its creator or an admin can "
                                         "change or delete it (copy it as yours to change it; anyone may run it)")


def task_out(session: Session, task: Task, version: DatasetVersion | None = None) -> TaskOut:
    """The task as answered; ``version`` is the one its next run grades (looked up when not given)."""
    if version is None:
        version = rows.graded_versions(session, [task]).get(task.id)
    evaluators = [TaskEvaluatorOut(evaluator_id=e.id, name=e.name, type=e.type, weight=w)
                  for e, w in rows.task_evaluators(session, task.id)]
    return TaskOut(id=task.id, name=task.name, description=task.description, dataset_id=task.dataset_id,
                   dataset_version=version.number if version else None,
                   dataset_name=version.source_name if version else None, pinned_version=task.pinned_version,
                   sample_count=version.row_count if version else 0, evaluators=evaluators,
                   created_by_id=task.created_by_id, owner=owner_name(session, task.created_by_id),
                   created_at=iso(task.created_at), updated_at=iso(task.updated_at))


def _links(session: Session, evaluators: list[TaskEvaluatorIn]) -> list[tuple[str, float]]:
    """``(evaluator id, weight)`` of each link, once each evaluator is known and attached once."""
    links: list[tuple[str, float]] = []
    for i, link in enumerate(evaluators):
        if evaluator_rows.get_evaluator(session, link.evaluator_id) is None:
            raise evaluator_not_found(link.evaluator_id)
        if any(link.evaluator_id == seen for seen, _ in links):
            raise ApiError(422, TWICE(index=i, id=repr(link.evaluator_id)))
        links.append((link.evaluator_id, link.weight))
    return links


def _check_dataset(session: Session, dataset_id: str | None) -> None:
    if dataset_id is not None and dataset_rows.get_dataset(session, dataset_id) is None:
        raise not_found("dataset", dataset_id)


def _check_pin(session: Session, dataset_id: str | None, number: int | None) -> None:
    """A pin names a ready version of the task's dataset."""
    if number is None:
        return
    if dataset_id is None:
        raise ApiError(422, PIN_WITHOUT_DATASET())
    if dataset_rows.get_version(session, dataset_id, number) is None:
        raise ApiError(422, NO_VERSION(dataset=repr(dataset_id), number=number))


@router.post("", response_model=Envelope[TaskOut], summary="Create a task")
def create_task(body: TaskCreate, service: ServiceDep, session: SessionDep, user: CurrentUser) -> Any:
    links = _links(session, body.evaluators)
    if body.dataset is not None and body.dataset_id is not None:
        raise ApiError(422, BOTH_DATASETS())
    _check_dataset(session, body.dataset_id)
    dataset_id = body.dataset_id
    if body.dataset is not None:
        dataset_id = ingest.new_dataset(service.database, name=body.dataset.name or body.name, description=None,
                                        created_by_id=user.id)
        try:
            ingest.ingest_inline(service.database, dataset_id, body.dataset.name, body.dataset.rows,
                                 limits=ingest.limits_of(service.settings), created_by_id=user.id,
                                 metrics=service.metrics)
        except BaseException:
            ingest.forget_dataset(service.database, dataset_id)
            raise
    try:
        _check_pin(session, dataset_id, body.pinned_version)
    except ApiError:
        if body.dataset is not None:
            ingest.forget_dataset(service.database, dataset_id or "")
        raise
    task = rows.create_task(session, name=body.name, description=body.description, dataset_id=dataset_id,
                            evaluators=links, created_by_id=user.id, pinned_version=body.pinned_version)
    session.commit()
    return Envelope(data=task_out(session, task))


@router.get("", response_model=Envelope[list[TaskOut]], summary="List tasks",
            description=f"Searched, sorted and paged by the query parameters; the total is in {TOTAL_HEADER}.")
def list_tasks(session: SessionDep, user: CurrentUser, response: Response, window: WindowDep,
               owner: OwnerQuery = None) -> Any:
    found, total = rows.find_tasks(session, owner_id=owner_of(session, user, owner),
                                   window=checked(window, rows.TASK_SORTABLE))
    tell_total(response, total)
    versions = rows.graded_versions(session, found)  # counts from the versions: no row is read
    return Envelope(data=[task_out(session, t, versions.get(t.id)) for t in found])


@router.get("/{task_id}", response_model=Envelope[TaskOut], summary="Get a task")
def get_task(task_id: str, session: SessionDep, _user: CurrentUser) -> Any:
    return Envelope(data=task_out(session, _found(session, task_id)))


@router.put("/{task_id}", response_model=Envelope[TaskOut], summary="Update a task")
def update_task(task_id: str, body: TaskUpdate, session: SessionDep, user: CurrentUser) -> Any:
    task = _changeable(session, task_id, user)
    given = body.model_fields_set
    if "name" in given and body.name is None:
        raise ApiError(422, NOT_NULL(field="name"))
    if "evaluators" in given and body.evaluators is None:
        raise ApiError(422, EVALUATORS_NULL())
    links = _links(session, body.evaluators) if body.evaluators is not None else None
    _check_dataset(session, body.dataset_id)
    dataset_id = body.dataset_id if "dataset_id" in given else task.dataset_id
    # A pin names a version of the dataset it was set with: another dataset drops it unless given.
    pinned = body.pinned_version if "pinned_version" in given else (
        task.pinned_version if dataset_id == task.dataset_id else None)
    _check_pin(session, dataset_id, pinned)
    fields = {key: getattr(body, key) for key in ("name", "description", "dataset_id") if key in given}
    rows.update_task(session, task, evaluators=links, pinned_version=pinned, **fields)
    session.commit()
    return Envelope(data=task_out(session, task))


@router.put("/{task_id}/dataset", response_model=Envelope[TaskOut],
            summary="Upload the task's dataset (a new version of it)")
def upload_dataset(task_id: str, service: ServiceDep, session: SessionDep, user: CurrentUser,
                   file: DatasetFile) -> Any:
    task = _changeable(session, task_id, user)
    name = ingest.upload_name(file.filename)
    ingest.file_format(name)
    dataset_id = task.dataset_id
    made = dataset_id is None
    if dataset_id is None:
        # a dataset's name is shorter than a file's (store.models.NAME_MAX)
        dataset_id = ingest.new_dataset(service.database, name=ingest.upload_name(name, NAME_MAX) or task.name,
                                        description=None,
                                        created_by_id=user.id)
    session.commit()  # ends the read: the upload writes in its own transactions
    try:
        ingest.ingest_upload(service.database, dataset_id, name, file.file, limits=ingest.limits_of(service.settings),
                             created_by_id=user.id, metrics=service.metrics)
    except BaseException:
        if made:
            ingest.forget_dataset(service.database, dataset_id)
        raise
    rows.set_dataset(session, task, dataset_id)
    session.commit()
    return Envelope(data=task_out(session, task))


@router.delete("/{task_id}", response_model=Envelope[dict[str, str]], summary="Delete a task and its runs")
def delete_task(task_id: str, session: SessionDep, user: CurrentUser) -> Any:
    task = _changeable(session, task_id, user)
    if any(r.status in ACTIVE_STATES for r in run_rows.list_runs(session, task_id)):
        raise ApiError(409, RUNNING(name=repr(task.name)))
    rows.delete_task(session, task)
    session.commit()
    return Envelope(data={"id": task_id})


@router.post("/{task_id}/runs", response_model=Envelope[RunOut], summary="Start a run of the task")
def start_run(task_id: str, service: ServiceDep, session: SessionDep, user: CurrentUser) -> Any:
    task = _found(session, task_id)  # anyone may run a task they can read: the run is theirs
    version = rows.graded_versions(session, [task]).get(task.id)
    if version is None and task.pinned_version is not None and task.dataset_id is not None:
        raise ApiError(409, PIN_GONE(name=repr(task.name), number=task.pinned_version))
    if version is None or version.row_count == 0:
        raise ApiError(422, NO_ROWS(name=repr(task.name)))
    snapshot = [RunEvaluator.of(e, w) for e, w in rows.task_evaluators(session, task_id)]
    run = run_rows.create_run(session, task_id=task_id, evaluators=snapshot, samples=version.row_count,
                              created_by_id=user.id, slice_size=service.worker.slice_size(snapshot),
                              dataset_version_id=version.id)
    session.commit()
    service.worker.submit(run.id)
    service.metrics.runs_started.inc()
    return Envelope(data=run_out(run, user.name))


@router.get("/{task_id}/runs", response_model=Envelope[list[RunOut]], summary="List the task's runs",
            description=f"Filtered, sorted and paged by the query parameters; the total is in {TOTAL_HEADER}.")
def list_runs(task_id: str, session: SessionDep, _user: CurrentUser, response: Response, window: WindowDep,
              status: Annotated[RunStatus | None, Query(description="Only runs in this state.")] = None) -> Any:
    _found(session, task_id)
    found, total = run_rows.find_runs(session, task_id, status=status, window=checked(window, run_rows.RUN_SORTABLE))
    tell_total(response, total)
    starters = users.names(session, {r.created_by_id for r in found if r.created_by_id})
    return Envelope(data=[run_out(r, starters.get(r.created_by_id or "")) for r in found])


def _found(session: Session, task_id: str) -> Task:
    task = rows.get_task(session, task_id)
    if task is None:
        raise not_found("task", task_id)
    return task


def _changeable(session: Session, task_id: str, user: Principal) -> Task:
    task = _found(session, task_id)
    check_may_change(session, user, task.created_by_id, NOT_YOURS, task.name)
    return task
