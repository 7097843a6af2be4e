"""Datasets, their versions and their rows.

A version's rows are written in batches as they arrive and read back in position order by
ranges (``iter_rows``), so neither an upload nor a run holds a whole dataset. Where they are
stored (one table on SQLite, a table per version on PostgreSQL) is ``row_tables``' business.
Listing datasets reads the version rows' counts, never the rows. A version a run graded
cannot be deleted (the foreign key is RESTRICT, and ``in_use`` says so first), so a finished
run's results always name rows that exist.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any, cast

import orjson
from sqlalchemy import CursorResult, delete, exists, func, select, update
from sqlalchemy.orm import Session

from assay.store import listing, row_tables
from assay.store.clean import storable
from assay.store.models import Dataset, DatasetRow, DatasetVersion, Run, Task, is_row_id, utcnow

READ_BATCH = 1000
"""Rows fetched per query by ``iter_rows``."""


def create_dataset(session: Session, *, name: str, description: str | None, created_by_id: str | None) -> Dataset:
    dataset = Dataset(name=name, description=description, created_by_id=created_by_id)
    session.add(dataset)
    session.flush()
    return dataset


def update_dataset(session: Session, dataset: Dataset, **fields: str | None) -> Dataset:
    """Set the given columns (name, description) and the update time."""
    for key, value in fields.items():
        setattr(dataset, key, storable(value))
    dataset.updated_at = utcnow()
    session.flush()
    return dataset


def get_dataset(session: Session, dataset_id: str) -> Dataset | None:
    """The dataset, or None (also for an id that is not a row id at all)."""
    return session.get(Dataset, dataset_id) if is_row_id(dataset_id) else None


DATASET_SORTABLE = {"name": Dataset.name, "createdAt": Dataset.created_at, "updatedAt": Dataset.updated_at}
"""The columns the dataset list may be sorted by, by their API names."""


def find_datasets(session: Session, *, owner_id: str | None = None,
                  window: listing.Window | None = None) -> tuple[list[tuple[Dataset, DatasetVersion | None]], int]:
    """A page of datasets (one user's when given) whose name or description has ``window.q``'s
    words, sorted by one of ``DATASET_SORTABLE`` (by default, the oldest first), each with its
    newest ready version; and how many match. Reads no rows."""
    query = select(Dataset).order_by(Dataset.created_at, Dataset.id)
    if owner_id is not None:
        query = query.where(Dataset.created_by_id == owner_id)
    window = window or listing.Window()
    found, total = listing.page(session, listing.search(query, window.q, [Dataset.name, Dataset.description]),
                                window, DATASET_SORTABLE, Dataset.id)
    latest = latest_versions(session, [d.id for d in found])
    return [(d, latest.get(d.id)) for d in found], total


def latest_versions(session: Session, dataset_ids: Sequence[str]) -> dict[str, DatasetVersion]:
    """The newest ready version of each of ``dataset_ids`` that has one."""
    if not dataset_ids:
        return {}
    newest = (select(DatasetVersion.dataset_id, func.max(DatasetVersion.number).label("number"))
              .where(DatasetVersion.ready.is_(True), DatasetVersion.dataset_id.in_(list(dataset_ids)))
              .group_by(DatasetVersion.dataset_id).subquery())
    query = select(DatasetVersion).join(newest, (DatasetVersion.dataset_id == newest.c.dataset_id)
                                        & (DatasetVersion.number == newest.c.number))
    return {v.dataset_id: v for v in session.scalars(query)}


def latest_version(session: Session, dataset_id: str) -> DatasetVersion | None:
    return latest_versions(session, [dataset_id]).get(dataset_id)


def list_versions(session: Session, dataset_id: str) -> list[DatasetVersion]:
    """The dataset's ready versions, oldest first."""
    query = (select(DatasetVersion).where(DatasetVersion.dataset_id == dataset_id, DatasetVersion.ready.is_(True))
             .order_by(DatasetVersion.number))
    return list(session.scalars(query))


def get_version(session: Session, dataset_id: str, number: int) -> DatasetVersion | None:
    """A ready version of the dataset by its number."""
    query = select(DatasetVersion).where(DatasetVersion.dataset_id == dataset_id, DatasetVersion.number == number,
                                         DatasetVersion.ready.is_(True))
    return session.scalars(query).first()


def version_by_id(session: Session, version_id: str) -> DatasetVersion | None:
    return session.get(DatasetVersion, version_id) if is_row_id(version_id) else None


def begin_version(session: Session, dataset_id: str, *, source_name: str | None, format: str,
                  created_by_id: str | None) -> DatasetVersion:
    """A new, not yet ready version numbered after every other of the dataset, with the table
    its rows go to on PostgreSQL (``row_tables``). Two uploads at once may pick the same number:
    the second's flush raises IntegrityError (the caller retries)."""
    number = session.scalar(select(func.max(DatasetVersion.number)).where(DatasetVersion.dataset_id == dataset_id))
    version = DatasetVersion(dataset_id=dataset_id, number=(number or 0) + 1, ready=False, source_name=source_name,
                             format=format, row_count=0, size_bytes=0, columns=[], created_by_id=created_by_id)
    session.add(version)
    session.flush()
    row_tables.create(session, version.id)
    return version


def add_rows(session: Session, version_id: str, rows: Sequence[tuple[int, str, str]]) -> None:
    """Insert ``(position, sample id, row as JSON text)`` rows of a version in one statement
    (PostgreSQL: ``COPY`` into the version's table), and count them in the version's
    ``row_count`` (how far an upload has come, for ``unready_versions``). LookupError when the
    version is gone; on SQLite IntegrityError when a sample id is there already (PostgreSQL
    finds a duplicate when ``finish_version`` builds the keys)."""
    if not rows:
        return
    counted = session.execute(update(DatasetVersion).where(DatasetVersion.id == version_id)
                              .values(row_count=rows[-1][0] + 1))
    if not cast(CursorResult[Any], counted).rowcount:  # first: a deleting server waits for this row's lock
        raise LookupError(f"dataset version {version_id} was deleted during its upload")
    if row_tables.per_version(session):
        row_tables.copy_rows(session, version_id, rows)
        return
    # The driver's own executemany: SQLAlchemy's parameter building costs more than SQLite's insert.
    session.connection().exec_driver_sql(
        "INSERT INTO dataset_rows (version_id, position, sample_id, data) VALUES (?, ?, ?, ?)",
        [(version_id, p, s, d) for p, s, d in rows])


def first_position(session: Session, version_id: str, sample_ids: Sequence[str]) -> dict[str, int]:
    """Where each of ``sample_ids`` already is in the version (for naming a duplicate)."""
    t = row_tables.rows_of(session, version_id)
    query = select(t.c.sample_id, t.c.position).where(t.c.version_id == version_id,
                                                      t.c.sample_id.in_(list(sample_ids)))
    return {s: p for s, p in session.execute(query).all()}


def finish_version(session: Session, version_id: str, *, row_count: int, size_bytes: int,
                   columns: list[str]) -> None:
    """Build the version's keys (PostgreSQL, see ``row_tables``) and mark it ready with its
    counts; from now on it is listed and graded. LookupError when the version is gone (deleted
    while its rows streamed in); ``row_tables.DuplicateSample`` when a sample id is there twice."""
    version = session.get(DatasetVersion, version_id)
    if version is None:
        raise LookupError(f"dataset version {version_id} was deleted during its upload")
    row_tables.index_version(session, version_id)
    version.ready, version.row_count, version.size_bytes, version.columns = True, row_count, size_bytes, columns
    session.execute(update(Dataset).where(Dataset.id == version.dataset_id).values(updated_at=utcnow()))
    session.flush()


def discard_version(session: Session, version_id: str) -> None:
    """Remove a version with its rows: on PostgreSQL its table goes with its row (a trigger drops
    it, whoever deletes the version); on SQLite its rows are deleted here first."""
    if not row_tables.per_version(session):
        session.execute(delete(DatasetRow).where(DatasetRow.version_id == version_id))
    session.execute(delete(DatasetVersion).where(DatasetVersion.id == version_id))


def iter_rows(session: Session, version_id: str, start: int = 0, stop: int | None = None, *,
              batch: int = READ_BATCH) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(position, row)`` of a version's rows with ``start <= position < stop`` (to the end
    when ``stop`` is None), in position order, fetched ``batch`` rows per query by key range
    (no OFFSET scan). Each row is the stored sample: ``id``, ``input``, ``output``, ...;
    positions count from 0 and have no gaps. LookupError when the version was deleted after it
    was looked up (``row_tables.gone_as_lookup``)."""
    t = row_tables.rows_of(session, version_id)
    position = start
    while stop is None or position < stop:
        upper = position + batch if stop is None else min(position + batch, stop)
        query = (select(t.c.position, t.c.data)
                 .where(t.c.version_id == version_id, t.c.position >= position, t.c.position < upper)
                 .order_by(t.c.position))
        with row_tables.gone_as_lookup(version_id):
            fetched = session.execute(query).all()
        for at, data in fetched:
            yield at, orjson.loads(data)
        if len(fetched) < upper - position:
            return
        position = upper


def read_rows(session: Session, version_id: str, start: int, stop: int) -> list[dict[str, Any]]:
    """The rows at positions ``start`` to ``stop - 1`` (a run's slice), in order."""
    return [row for _, row in iter_rows(session, version_id, start, stop)]


def find_row(session: Session, version_id: str, sample_id: str) -> dict[str, Any] | None:
    """The row with this sample id in the version, or None."""
    t = row_tables.rows_of(session, version_id)
    with row_tables.gone_as_lookup(version_id):
        data = session.scalar(select(t.c.data).where(t.c.version_id == version_id, t.c.sample_id == sample_id))
    return None if data is None else orjson.loads(data)


def in_use(session: Session, version_ids: Sequence[str]) -> bool:
    """Whether a run graded (or is grading) one of these versions."""
    if not version_ids:
        return False
    return bool(session.scalar(select(exists().where(Run.dataset_version_id.in_(list(version_ids))))))


def tasks_naming(session: Session, dataset_id: str) -> list[str]:
    """The names of the tasks that grade this dataset."""
    return [name for _, name in tasks_of(session, dataset_id)]


def tasks_of(session: Session, dataset_id: str) -> list[tuple[str, str]]:
    """``(id, name)`` of the tasks that grade this dataset, by name."""
    query = select(Task.id, Task.name).where(Task.dataset_id == dataset_id).order_by(Task.name, Task.id)
    return [(row.id, row.name) for row in session.execute(query)]


def runs_grading(session: Session, version_ids: Sequence[str], limit: int = 20) -> list[tuple[str, str]]:
    """``(run id, "task name (start time)")`` of up to ``limit`` runs that graded these versions."""
    query = (select(Run.id, Run.created_at, Task.name).join(Task, Task.id == Run.task_id)
             .where(Run.dataset_version_id.in_(list(version_ids))).order_by(Run.created_at).limit(limit))
    return [(row.id, f"{row.name} ({row.created_at:%Y-%m-%d %H:%M})") for row in session.execute(query)]


def delete_version(session: Session, version: DatasetVersion) -> None:
    discard_version(session, version.id)


def delete_dataset(session: Session, dataset: Dataset) -> None:
    """Delete the dataset with every version and row (the caller checked nothing uses them)."""
    version_ids = list(session.scalars(select(DatasetVersion.id).where(DatasetVersion.dataset_id == dataset.id)))
    for version_id in version_ids:
        discard_version(session, version_id)
    session.delete(dataset)
    session.flush()


def unready_versions(session: Session) -> dict[str, int]:
    """Versions whose upload has not finished, each with how many rows it has written so far
    (counted by ``add_rows`` in the version's row: no row is read)."""
    query = select(DatasetVersion.id, DatasetVersion.row_count).where(DatasetVersion.ready.is_(False))
    return {version_id: count for version_id, count in session.execute(query).all()}


def discard_unready(session: Session, version_id: str) -> bool:
    """Remove a version whose upload stalled, with its rows, unless it became ready meanwhile;
    True when it was removed (False too when another server removed it first)."""
    still = session.scalar(select(DatasetVersion.ready).where(DatasetVersion.id == version_id).with_for_update())
    if still is None or still:
        return False
    discard_version(session, version_id)
    return True
