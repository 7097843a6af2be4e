"""What keeps a service run over millions of rows flat, checked by the statements it sends (no
timings): starting a run reads no dataset row; summaries and exports page results by key
(never OFFSET, never the whole run at once); the live view reads only the slices done since
its last read; the score histogram is counted by the database. On SQLite and PostgreSQL."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from sqlalchemy import event

from assay.service.run_summary import LiveSummaries, summarise
from assay.store import Database, queue
from assay.store import runs as run_rows
from assay.store import tasks as task_rows
from assay.store.presets import PRESETS
from assay.store.snapshot import RunEvaluator


@contextmanager
def statements(database: Database) -> Iterator[list[str]]:
    """The SQL statements sent to ``database`` inside the block (failing on an OFFSET that skips rows)."""
    sent: list[str] = []

    def note(_conn, _cursor, statement, params, _context, _many) -> None:
        statement = " ".join(statement.split())
        if "OFFSET" in statement.upper():  # SQLite spells every LIMIT "LIMIT ? OFFSET ?": is it 0?
            assert statement.endswith("OFFSET ?") and params[-1] == 0, (statement, params)
            statement = statement.removesuffix(" OFFSET ?")
        sent.append(statement)

    event.listen(database.engine, "before_cursor_execute", note)
    try:
        yield sent
    finally:
        event.remove(database.engine, "before_cursor_execute", note)


def _run(database: Database, samples: int, slice_size: int) -> str:
    with database.session() as session:
        task = task_rows.create_task(session, name="t", description=None, dataset_id=None,
                                     evaluators=[(PRESETS[0].id, 1.0), (PRESETS[1].id, 2.0)], created_by_id=None)
        specs = [RunEvaluator(p.id, p.name, "preset", {}, w) for p, w in ((PRESETS[0], 1.0), (PRESETS[1], 2.0))]
        return run_rows.create_run(session, task_id=task.id, evaluators=specs, samples=samples, created_by_id=None,
                                   slice_size=slice_size).id


def _grade(database: Database, run_id: str, start: int, stop: int) -> None:
    """Store both evaluators' results of samples ``start`` to ``stop - 1``, and mark their slice done."""
    rows = [{"run_id": run_id, "sample_id": f"s{i}", "sample_index": i, "evaluator_id": p.id,
             "evaluator_name": p.name, "status": "passed" if (i + k) % 3 else "failed", "passed": bool((i + k) % 3),
             "score": ((i * 7 + k) % 11) / 10 - 0.05, "reason": None, "details": {}, "error_code": None,
             "latency_ms": 0.0} for i in range(start, stop) for k, p in enumerate(PRESETS[:2])]
    with database.session() as session:
        run_rows.add_results(session, rows)
        (slice_id,) = [i for i, s, _ in _slices(session, run_id) if s == start]
        queue.finish(session, slice_id)


def _slices(session, run_id: str) -> list[tuple[int, int, int]]:
    from sqlalchemy import select

    from assay.store.models import RunSlice

    return [tuple(r) for r in session.execute(select(RunSlice.id, RunSlice.start, RunSlice.stop)
                                              .where(RunSlice.run_id == run_id).order_by(RunSlice.start))]


def _rounded(value):
    if isinstance(value, float):
        return round(value, 9)
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return value


def test_starting_a_run_reads_no_row_and_writes_its_slices_in_a_few_statements(database):
    with statements(database) as sent:
        run_id = _run(database, 1_000_000, 1000)
    assert not [s for s in sent if "dataset_rows" in s or "evaluation_results" in s]
    slice_inserts = [s for s in sent if s.startswith("INSERT INTO run_slices")]
    assert len(slice_inserts) <= 2, len(slice_inserts)  # 1,000 slices: batched, not one statement each
    with database.session() as session:
        assert len(_slices(session, run_id)) == 1000


def test_summaries_page_results_by_key_and_the_live_view_reads_only_new_slices(database):
    run_id = _run(database, 40, 10)
    weights = {PRESETS[0].id: 1.0, PRESETS[1].id: 2.0}
    live = LiveSummaries()
    _grade(database, run_id, 10, 20)
    _grade(database, run_id, 0, 10)
    with database.session() as session:
        first = live.summary(session, run_id, weights)
    assert first["samples"] == 20
    kept = live._runs[run_id].running  # a few sums per evaluator, never an entry per sample
    assert all(len(o.passed) == 0 for o in [kept.verdicts, *kept.graders.values()])
    with statements(database) as sent, database.session() as session:
        again = live.summary(session, run_id, weights)
    assert again == first and not [s for s in sent if "evaluation_results" in s]  # nothing new: no result read
    _grade(database, run_id, 30, 40)
    with statements(database) as sent, database.session() as session:
        later = live.summary(session, run_id, weights)
    read = [s for s in sent if "evaluation_results" in s]
    assert len(read) == 1 and "sample_index >=" in read[0] and "sample_index <" in read[0]  # slice 30-40 alone
    _grade(database, run_id, 20, 30)
    with statements(database) as sent, database.session() as session:
        final = live.summary(session, run_id, weights)
        whole = summarise(session, run_id, weights)
    # the same figures; sums are taken in another order, so the last bits of a mean may differ
    assert later["samples"] == 30 and _rounded(final) == _rounded(whole) and final["samples"] == 40
    for statement in (s for s in sent if "evaluation_results" in s):
        assert re.search(r"LIMIT", statement, re.I), statement


def test_an_export_pages_results_by_key(database):
    run_id = _run(database, 30, 10)
    for start in (0, 10, 20):
        _grade(database, run_id, start, start + 10)
    query = run_rows.results_query(run_id)
    with statements(database) as sent, database.session() as session:
        got = [(r[-2], r[1]) for r in run_rows.iter_result_rows(session, query, batch=7)]
    assert [i for i, _ in got] == sorted(i for i, _ in got) and len(got) == 60
    assert len(set(got)) == 60  # every result once, across the batches' seams
    assert len(sent) == 60 // 7 + 1


def test_a_results_page_after_a_cursor_is_read_by_key(database):
    run_id = _run(database, 30, 10)
    for start in (0, 10, 20):
        _grade(database, run_id, start, start + 10)
    query = run_rows.results_query(run_id)
    with database.session() as session:
        every = run_rows.results_after(session, query, None, limit=100)
        with statements(database) as sent:
            page = run_rows.results_after(session, query, run_rows.result_key(every[40]), limit=7)
    assert [r.id for r in page] == [r.id for r in every[41:48]] and len(sent) == 1


@pytest.mark.parametrize("bins", [2, 10])
def test_the_score_histogram_is_counted_by_the_database(database, bins):
    run_id = _run(database, 30, 10)
    for start in (0, 10, 20):
        _grade(database, run_id, start, start + 10)
    with database.session() as session:
        run_rows.add_results(session, [{"run_id": run_id, "sample_id": "x", "sample_index": 99,
                                        "evaluator_id": PRESETS[0].id, "evaluator_name": "e", "status": "error",
                                        "passed": False, "score": None, "reason": None, "details": {},
                                        "error_code": "runtime_error", "latency_ms": 0.0}])
        scores = [r.score for r in run_rows.iter_results(session, run_rows.results_query(run_id))]
        with statements(database) as sent:
            counts, unscored = run_rows.score_histogram(session, run_id, None, bins)
    expected = [0] * bins
    for score in (s for s in scores if s is not None):
        expected[min(int(max(score, 0.0) * bins), bins - 1)] += 1
    assert (counts, unscored) == (expected, 1) and len(sent) == 1


def test_a_service_summary_leaves_errored_samples_out_of_the_mean_score(database):
    """A sample one evaluator could not grade (an error) while the other scored it: out of the
    run's mean score and its interval, live and final, as `assay run` leaves it out."""
    run_id = _run(database, 10, 10)
    weights = {PRESETS[0].id: 1.0, PRESETS[1].id: 2.0}
    rows = []
    for i in range(10):
        for k, p in enumerate(PRESETS[:2]):
            errored = i == 3 and k == 1
            rows.append({"run_id": run_id, "sample_id": f"s{i}", "sample_index": i, "evaluator_id": p.id,
                         "evaluator_name": p.name, "status": "error" if errored else ("passed" if i % 2 else "failed"),
                         "passed": not errored and bool(i % 2), "score": None if errored else (0.9 if i % 2 else 0.2),
                         "reason": None, "details": {}, "error_code": "runtime_error" if errored else None,
                         "latency_ms": 0.0})
    with database.session() as session:
        run_rows.add_results(session, rows)
        (slice_id,) = [i for i, _, _ in _slices(session, run_id)]
        queue.finish(session, slice_id)
        whole = summarise(session, run_id, weights)
        live = LiveSummaries().summary(session, run_id, weights)
    decided = [0.9 if i % 2 else 0.2 for i in range(10) if i != 3]  # both evaluators agree on a sample's score
    assert whole["samplesErrored"] == 1 and whole["leftOut"] == 1
    assert whole["meanScore"] == pytest.approx(sum(decided) / 9)
    assert whole["meanScore"] != pytest.approx((sum(decided) + 0.9) / 10)  # s3's other evaluator scored it 0.9
    lo, hi = whole["meanScoreCi"]
    assert lo < whole["meanScore"] < hi
    errored = next(e for e in whole["evaluators"] if e["evaluatorId"] == PRESETS[1].id)
    assert errored["error"] == 1 and errored["meanScore"] == pytest.approx(sum(decided) / 9)
    assert _rounded(live) == _rounded(whole)
