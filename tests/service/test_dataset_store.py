"""The dataset store on SQLite and PostgreSQL: a version's rows read back by position range in
order, and tasks whose rows were inline before revision 0002 migrated into dataset versions
that their runs name."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from service_support import all_stored_rows, stored_rows
from sqlalchemy import text
from sqlalchemy.exc import IntegrityError

from assay.store import Database, upgrade
from assay.store import datasets as store
from assay.store import tasks as task_rows


@pytest.fixture
def database(db_url):
    db = Database(db_url)
    yield db
    db.dispose()


def _version_with(database: Database, n: int) -> str:
    with database.session() as session:
        dataset = store.create_dataset(session, name="d", description=None, created_by_id=None)
        version = store.begin_version(session, dataset.id, source_name="d.jsonl", format="jsonl", created_by_id=None)
        store.add_rows(session, version.id, [(i, f"s{i}", json.dumps({"id": f"s{i}", "input": i})) for i in range(n)])
        store.finish_version(session, version.id, row_count=n, size_bytes=0, columns=["id", "input"])
        return version.id


def test_rows_are_read_by_position_range_in_order(database):
    upgrade(database)
    version_id = _version_with(database, 25)
    with database.session() as session:
        everything = list(store.iter_rows(session, version_id, batch=4))
        assert [p for p, _ in everything] == list(range(25))
        assert everything[7][1] == {"id": "s7", "input": 7}
        assert [r["id"] for r in store.read_rows(session, version_id, 10, 13)] == ["s10", "s11", "s12"]
        assert [p for p, _ in store.iter_rows(session, version_id, 22, 99, batch=2)] == [22, 23, 24]
        assert store.read_rows(session, version_id, 30, 40) == []
        assert store.find_row(session, version_id, "s3") == {"id": "s3", "input": 3}
        assert store.find_row(session, version_id, "nope") is None


def test_rows_keep_every_character_that_copy_escapes(database):
    """On PostgreSQL a batch goes to COPY as one block of text unless a field holds a tab, a
    line break, a carriage return or a backslash: such rows come back as they went in."""
    upgrade(database)
    odd = ["tab\there", "line\nbreak", "cr\rhere", "back\\slash", "\\N", "\\.", "中文"]
    with database.session() as session:
        dataset = store.create_dataset(session, name="d", description=None, created_by_id=None)
        version_id = store.begin_version(session, dataset.id, source_name=None, format="jsonl", created_by_id=None).id
        store.add_rows(session, version_id, [(i, s, json.dumps({"id": s, "input": s})) for i, s in enumerate(odd)])
        store.add_rows(session, version_id, [(len(odd), "plain", json.dumps({"id": "plain"}))])
        store.finish_version(session, version_id, row_count=len(odd) + 1, size_bytes=0, columns=["id", "input"])
    with database.session() as session:
        assert [r["id"] for _, r in store.iter_rows(session, version_id)] == [*odd, "plain"]
        assert all(store.find_row(session, version_id, s) == {"id": s, "input": s} for s in odd)


def test_inline_task_rows_move_into_a_dataset_version_that_the_tasks_runs_name(database):
    upgrade(database, "0001")
    now = datetime.now(UTC)
    rows = [{"id": f"r{i}", "input": "q", "output": "a", "metadata": {"k": i}} for i in range(2500)]
    with database.engine.begin() as connection:
        connection.execute(text("INSERT INTO tasks (id, name, description, dataset_name, dataset, created_by_id, "
                                "created_at, updated_at) VALUES (:id, :name, NULL, :dn, :ds, NULL, :now, :now)"),
                           [{"id": "00000000-0000-0000-0000-000000000001", "name": "big", "dn": "big.jsonl",
                             "ds": json.dumps(rows), "now": now},
                            {"id": "00000000-0000-0000-0000-000000000002", "name": "empty", "dn": None,
                             "ds": "[]", "now": now}])
        connection.execute(text("INSERT INTO runs (id, task_id, status, evaluators, total, done, created_at) VALUES "
                                "('00000000-0000-0000-0000-0000000000aa', '00000000-0000-0000-0000-000000000001', "
                                "'completed', '[]', 0, 0, :now)"), {"now": now})
    upgrade(database)
    with database.session() as session:
        big = task_rows.get_task(session, "00000000-0000-0000-0000-000000000001")
        empty = task_rows.get_task(session, "00000000-0000-0000-0000-000000000002")
        assert empty is not None and empty.dataset_id is None
        assert big is not None and big.dataset_id is not None
        version = task_rows.graded_versions(session, [big])[big.id]
        assert (version.number, version.row_count, version.source_name) == (1, 2500, "big.jsonl")
        assert version.columns == ["id", "input", "output", "metadata"]
        assert [row for _, row in store.iter_rows(session, version.id)] == rows
        run_version = session.execute(text("SELECT dataset_version_id FROM runs")).scalar_one()
        assert run_version == version.id
        assert store.in_use(session, [version.id])


def test_deleting_a_version_any_way_deletes_its_rows(database):
    """On PostgreSQL a version's rows are a table of their own (revision 0007), which a trigger
    drops with the version, however it is deleted (here by hand, and by its dataset's cascade)."""
    upgrade(database)
    version_id, other, third = _version_with(database, 3), _version_with(database, 2), _version_with(database, 4)
    with database.session() as session:
        session.execute(text("DELETE FROM dataset_versions WHERE id = :id"), {"id": version_id})
    assert (stored_rows(database, version_id), stored_rows(database, other), all_stored_rows(database)) == (0, 2, 6)
    with database.session() as session:
        session.execute(text("DELETE FROM datasets WHERE id = (SELECT dataset_id FROM dataset_versions "
                             "WHERE id = :id)"), {"id": third})
    assert all_stored_rows(database) == 2


def test_a_sample_id_twice_in_a_version_is_refused_with_both_positions(database):
    from assay.store.row_tables import DuplicateSample

    upgrade(database)
    with database.session() as session:
        dataset = store.create_dataset(session, name="d", description=None, created_by_id=None)
        version_id = store.begin_version(session, dataset.id, source_name=None, format="jsonl", created_by_id=None).id
    with pytest.raises((DuplicateSample, IntegrityError)) as refused, database.session() as session:
        store.add_rows(session, version_id, [(i, f"s{i % 5 if i > 6 else i}", "{}") for i in range(9)])
        store.finish_version(session, version_id, row_count=9, size_bytes=0, columns=[])
    if refused.type is DuplicateSample:  # PostgreSQL: found by the key's build; SQLite: by its key at once
        assert (refused.value.sample_id, refused.value.first, refused.value.again) == ("s2", 2, 7)


def test_an_upload_whose_version_was_deleted_meanwhile_keeps_no_rows(database):
    from assay.service import datasets as ingest

    upgrade(database)
    dataset_id = ingest.new_dataset(database, name="d", description=None, created_by_id=None)

    def rows():
        for i in range(12_000):  # three batches: the version goes while the second is written
            if i == 6_000:
                with database.session() as session:
                    session.execute(text("DELETE FROM dataset_versions"))
            yield i + 1, {"id": f"s{i}", "input": "q"}

    # SQLite's key refuses the next batch; PostgreSQL's rows have none: the version is not found at the end.
    with pytest.raises((IntegrityError, LookupError)):
        ingest._ingest(database, dataset_id, "d.jsonl", "jsonl", rows(), limits=ingest.Limits(10**6, 10**6),
                       created_by_id=None, clean=False)
    assert all_stored_rows(database) == 0


def test_rows_of_a_version_deleted_after_its_lookup_are_not_found(database):
    """On PostgreSQL the version's table is dropped with it: a read that looked the version up
    before another transaction deleted it says LookupError (the API's 404), not the driver's
    missing-table error (a 500 before). SQLite's rows are in one table, read as a snapshot."""
    if database.is_sqlite:
        pytest.skip("SQLite keeps every version's rows in dataset_rows: nothing is dropped")
    upgrade(database)
    version_id = _version_with(database, 3)
    with database.session() as reader:
        assert store.find_row(reader, version_id, "s1") == {"id": "s1", "input": 1}
        reader.commit()  # the lookup's transaction ends, as between a route's lookup and its read
        with database.session() as deleter:
            store.discard_version(deleter, version_id)
        with pytest.raises(LookupError, match=version_id):
            list(store.iter_rows(reader, version_id))
        reader.rollback()
        with pytest.raises(LookupError, match=version_id):
            store.find_row(reader, version_id, "s1")
        reader.rollback()
