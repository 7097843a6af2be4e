"""A dataset version whose upload stopped (its server was killed) is removed with its rows once
they have stood still long enough; one still moving, or finished, is kept; several servers may
look at once. On SQLite and PostgreSQL."""

from __future__ import annotations

import pytest
from service_support import stored_rows
from sqlalchemy import func, select

from assay.service.reaper import UploadReaper
from assay.store import datasets
from assay.store.models import DatasetVersion


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def upload(database, rows: int, *, ready: bool = False) -> str:
    """A version with ``rows`` rows written, finished or left as a killed server leaves it."""
    with database.session() as session:
        dataset = datasets.create_dataset(session, name="d", description=None, created_by_id=None)
        version = datasets.begin_version(session, dataset.id, source_name="d.jsonl", format="jsonl",
                                         created_by_id=None)
        version_id = version.id
    more(database, version_id, 0, rows)
    if ready:
        with database.session() as session:
            datasets.finish_version(session, version_id, row_count=rows, size_bytes=1, columns=["id"])
    return version_id


def more(database, version_id: str, start: int, stop: int) -> None:
    with database.session() as session:
        datasets.add_rows(session, version_id, [(i, f"s{i}", f'{{"id": "s{i}"}}') for i in range(start, stop)])


def left(database, version_id: str) -> tuple[int, int]:
    with database.session() as session:
        versions = session.scalar(select(func.count()).where(DatasetVersion.id == version_id))
    return versions, stored_rows(database, version_id)


@pytest.fixture
def clock() -> Clock:
    return Clock()


def test_a_stalled_upload_is_removed_and_a_moving_or_finished_one_kept(database, clock):
    dead = upload(database, 3)
    moving = upload(database, 2)
    empty = upload(database, 0)  # killed before its first batch
    finished = upload(database, 2, ready=True)
    reaper = UploadReaper(database, stale_s=60, clock=clock)
    assert reaper.sweep() == []  # first look: noted
    clock.now = 50
    more(database, moving, 2, 4)
    assert reaper.sweep() == []
    clock.now = 100  # dead and empty stood still for 100 s; moving moved 50 s ago
    assert sorted(reaper.sweep()) == sorted([dead, empty])
    assert left(database, dead) == (0, 0) and left(database, empty) == (0, 0)
    assert left(database, moving) == (1, 4) and left(database, finished) == (1, 2)
    with database.session() as session:
        datasets.finish_version(session, moving, row_count=4, size_bytes=1, columns=["id"])
    clock.now = 1000
    assert reaper.sweep() == [] and left(database, moving) == (1, 4)  # finished meanwhile: kept


def test_servers_looking_at_once_remove_a_stalled_upload_once(database, clock):
    dead = upload(database, 5)
    reapers = [UploadReaper(database, stale_s=60, clock=clock) for _ in range(2)]
    for reaper in reapers:
        reaper.sweep()
    clock.now = 60
    removed = [reaper.sweep() for reaper in reapers]
    assert removed == [[dead], []] and left(database, dead) == (0, 0)


def test_a_version_that_became_ready_after_the_look_is_not_removed(database):
    version_id = upload(database, 2)
    with database.session() as session:
        datasets.finish_version(session, version_id, row_count=2, size_bytes=1, columns=["id"])
    with database.session() as session:
        assert datasets.discard_unready(session, version_id) is False
    assert left(database, version_id) == (1, 2)
