"""``/api/v1/datasets``: named, versioned datasets; a file uploaded to ``/versions`` streams
into a new version (``service.datasets``), rows are read a page at a time."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request, Response
from sqlalchemy.orm import Session
from starlette.concurrency import run_in_threadpool

from assay.core.messages import Phrase
from assay.server.auth import Principal
from assay.server.body_stream import BodyFile
from assay.server.deps import CurrentUser, ServiceDep, SessionDep
from assay.server.errors import NOT_NULL, ApiError, blocked, not_found
from assay.server.listing import TOTAL_HEADER, OwnerQuery, WindowDep, checked, owner_of, tell_total
from assay.server.ownership import check_may_change, owner_name
from assay.server.schemas.common import ERROR_RESPONSES, Envelope, iso
from assay.server.schemas.datasets import (
    DatasetCopy,
    DatasetCreate,
    DatasetDetail,
    DatasetOut,
    DatasetRowOut,
    DatasetRowPage,
    DatasetUpdate,
    DatasetVersionOut,
)
from assay.server.service import Service
from assay.service import datasets as ingest
from assay.store import datasets as rows
from assay.store.models import NAME_MAX, Dataset, DatasetVersion

router = APIRouter(prefix="/datasets", tags=["datasets"], responses=ERROR_RESPONSES)

VERSION_GRADED = Phrase("api.dataset.version_graded", "version {number} of dataset {name} was graded by a run, whose "
                                                      "results refer to its rows; delete those runs first")
IN_USE = Phrase("api.dataset.in_use", "dataset {name} is graded by task(s) {tasks}; delete them or give them another "
                                      "dataset first")
GRADED = Phrase("api.dataset.graded", "dataset {name} has versions that runs graded; delete those runs first")
NO_VERSION = Phrase("api.dataset.no_version", "dataset {name} has no version yet: upload a file first")
NO_SUCH_VERSION = Phrase("api.dataset.no_such_version", "dataset {name} has no version {number}")
NOT_YOURS = Phrase("api.dataset.not_yours", "dataset {name} belongs to {owner}; only its creator or an admin can "
                                            "change it (copy it as yours to change it)")
MAX_PAGE = 1000
MAX_NUMBER = 2**31 - 1
"""Version numbers and row offsets beyond a database integer are refused as input, not at the driver."""


def version_out(version: DatasetVersion) -> DatasetVersionOut:
    return DatasetVersionOut(number=version.number, source_name=version.source_name, format=version.format,
                             row_count=version.row_count, size_bytes=version.size_bytes, columns=version.columns,
                             created_by_id=version.created_by_id, created_at=iso(version.created_at))


def dataset_out(dataset: Dataset, latest: DatasetVersion | None) -> DatasetOut:
    return DatasetOut(id=dataset.id, name=dataset.name, description=dataset.description,
                      latest=version_out(latest) if latest is not None else None, created_by_id=dataset.created_by_id,
                      created_at=iso(dataset.created_at), updated_at=iso(dataset.updated_at))


@router.post("", response_model=Envelope[DatasetDetail], summary="Create a dataset (with rows: its version 1)")
def create_dataset(body: DatasetCreate, service: ServiceDep, user: CurrentUser) -> Any:
    dataset_id = ingest.new_dataset(service.database, name=body.name, description=body.description,
                                    created_by_id=user.id)
    if body.rows is not None:
        try:
            ingest.ingest_inline(service.database, dataset_id, None, body.rows,
                                 limits=ingest.limits_of(service.settings), created_by_id=user.id, source="rows",
                                 metrics=service.metrics)
        except BaseException:
            ingest.forget_dataset(service.database, dataset_id)
            raise
    with service.database.session() as session:
        return Envelope(data=_detail(session, _found(session, dataset_id)))


@router.get("", response_model=Envelope[list[DatasetOut]], summary="List datasets (no rows are read)",
            description=f"Searched, sorted and paged by the query parameters; the total is in {TOTAL_HEADER}.")
def list_datasets(session: SessionDep, user: CurrentUser, response: Response, window: WindowDep,
                  owner: OwnerQuery = None) -> Any:
    found, total = rows.find_datasets(session, owner_id=owner_of(session, user, owner),
                                      window=checked(window, rows.DATASET_SORTABLE))
    tell_total(response, total)
    return Envelope(data=[dataset_out(d, v) for d, v in found])


@router.get("/{dataset_id}", response_model=Envelope[DatasetDetail], summary="Get a dataset and its versions")
def get_dataset(dataset_id: str, session: SessionDep, _user: CurrentUser) -> Any:
    return Envelope(data=_detail(session, _found(session, dataset_id)))


@router.post("/{dataset_id}/copy", response_model=Envelope[DatasetDetail],
             summary="Copy a dataset as yours: its newest version becomes version 1 of a new dataset")
def copy_dataset(dataset_id: str, body: DatasetCopy, service: ServiceDep, user: CurrentUser) -> Any:
    with service.database.session() as session:
        name = body.name or f"{_found(session, dataset_id).name} (copy)"
    try:
        copied = ingest.copy_dataset(service.database, dataset_id, name=name[:NAME_MAX], created_by_id=user.id,
                                     limits=ingest.limits_of(service.settings), metrics=service.metrics)
    except LookupError:
        raise not_found("dataset", dataset_id) from None
    with service.database.session() as session:
        return Envelope(data=_detail(session, _found(session, copied)))


@router.patch("/{dataset_id}", response_model=Envelope[DatasetDetail], summary="Rename a dataset or change its "
              "description", description="Only the fields sent change: `{\"name\": \"...\"}`, "
              "`{\"description\": null}` (cleared). Its creator or an admin may.")
def update_dataset(dataset_id: str, body: DatasetUpdate, session: SessionDep, user: CurrentUser) -> Any:
    dataset = _changeable(session, dataset_id, user)
    changes = body.model_dump(exclude_unset=True, by_alias=False)
    if "name" in changes and changes["name"] is None:
        raise ApiError(422, NOT_NULL(field="name"))
    rows.update_dataset(session, dataset, **changes)
    session.commit()
    return Envelope(data=_detail(session, dataset))


@router.post("/{dataset_id}/versions", response_model=Envelope[DatasetVersionOut],
             summary="Upload a file as the dataset's next version",
             description="The request body is the file itself (not a form), read as it arrives: "
                         "`curl --data-binary @data.csv '.../datasets/ID/versions?filename=data.csv'`. "
                         "The format comes from `filename`'s suffix: .jsonl/.ndjson, .json, .csv, .tsv, .parquet.")
async def upload_version(dataset_id: str, request: Request, service: ServiceDep, user: CurrentUser,
                         filename: Annotated[str, Query(min_length=1, max_length=1000,
                                                        description="The file's name; its suffix names the format.")]
                         ) -> Any:
    name = ingest.upload_name(filename)
    ingest.file_format(name)
    await run_in_threadpool(_check_changeable, service, dataset_id, user)
    body = BodyFile(request.stream())
    version = await run_in_threadpool(ingest.ingest_upload, service.database, dataset_id, name, body,
                                      limits=ingest.limits_of(service.settings), created_by_id=user.id,
                                      metrics=service.metrics)
    return Envelope(data=version_out(version))


@router.get("/{dataset_id}/rows", response_model=Envelope[DatasetRowPage], summary="A page of a version's rows")
def list_rows(dataset_id: str, session: SessionDep, _user: CurrentUser,
              version: Annotated[int | None, Query(ge=1, le=MAX_NUMBER,
                                                   description="The version; the newest when left out.")] = None,
              offset: Annotated[int, Query(ge=0, le=MAX_NUMBER)] = 0,
              limit: Annotated[int, Query(ge=1, le=MAX_PAGE)] = 100) -> Any:
    dataset = _found(session, dataset_id)
    found = _version(session, dataset, version)
    try:
        items = [DatasetRowOut(position=p, row=r) for p, r in rows.iter_rows(session, found.id, offset, offset + limit)]
    except LookupError:  # the version was deleted since it was found above
        raise ApiError(404, NO_SUCH_VERSION(name=repr(dataset.name), number=found.number)) from None
    return Envelope(data=DatasetRowPage(items=items, version=found.number, total=found.row_count, limit=limit,
                                        offset=offset))


@router.delete("/{dataset_id}/versions/{number}", response_model=Envelope[dict[str, Any]],
               summary="Delete a version no run graded")
def delete_version(dataset_id: str, number: Annotated[int, Path(ge=1, le=MAX_NUMBER)], session: SessionDep,
                   user: CurrentUser) -> Any:
    dataset = _changeable(session, dataset_id, user)
    found = _version(session, dataset, number)
    if rows.in_use(session, [found.id]):
        raise blocked(409, VERSION_GRADED(number=number, name=repr(dataset.name)), "run",
                      rows.runs_grading(session, [found.id]))
    rows.delete_version(session, found)
    session.commit()
    return Envelope(data={"id": dataset_id, "version": number})


@router.delete("/{dataset_id}", response_model=Envelope[dict[str, str]],
               summary="Delete a dataset no task names and no run graded")
def delete_dataset(dataset_id: str, session: SessionDep, user: CurrentUser) -> Any:
    dataset = _changeable(session, dataset_id, user)
    tasks = rows.tasks_of(session, dataset.id)
    if tasks:
        raise blocked(409, IN_USE(name=repr(dataset.name), tasks=", ".join(repr(name) for _, name in tasks[:5])),
                      "task", tasks)
    versions = [v.id for v in rows.list_versions(session, dataset.id)]
    if rows.in_use(session, versions):
        raise blocked(409, GRADED(name=repr(dataset.name)), "run", rows.runs_grading(session, versions))
    rows.delete_dataset(session, dataset)
    session.commit()
    return Envelope(data={"id": dataset_id})


def _detail(session: Session, dataset: Dataset) -> DatasetDetail:
    versions = rows.list_versions(session, dataset.id)
    out = dataset_out(dataset, versions[-1] if versions else None)
    out.owner = owner_name(session, dataset.created_by_id)
    return DatasetDetail(**out.model_dump(),
                         versions=[version_out(v) for v in versions], task_names=rows.tasks_naming(session, dataset.id))


def _found(session: Session, dataset_id: str) -> Dataset:
    dataset = rows.get_dataset(session, dataset_id)
    if dataset is None:
        raise not_found("dataset", dataset_id)
    return dataset


def _version(session: Session, dataset: Dataset, number: int | None) -> DatasetVersion:
    found = rows.latest_version(session, dataset.id) if number is None else rows.get_version(session, dataset.id,
                                                                                              number)
    if found is None:
        raise ApiError(404, NO_VERSION(name=repr(dataset.name)) if number is None
                       else NO_SUCH_VERSION(name=repr(dataset.name), number=number))
    return found


def _changeable(session: Session, dataset_id: str, user: Principal) -> Dataset:
    dataset = _found(session, dataset_id)
    check_may_change(session, user, dataset.created_by_id, NOT_YOURS, dataset.name)
    return dataset


def _check_changeable(service: Service, dataset_id: str, user: Principal) -> None:
    with service.database.session() as session:
        _changeable(session, dataset_id, user)
