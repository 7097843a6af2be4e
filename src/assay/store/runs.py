"""Runs of a task and their evaluation results.

Results are written with "insert, ignore if present" on (run, sample, evaluator), so a run
resumed after a crash can grade a sample again without adding a second row, and a restart
never loses what was committed before it.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from datetime import datetime
from typing import Any, cast

from sqlalchemy import BigInteger, CursorResult, Select, Table, and_, case, func, literal, or_, select, update
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from assay.store import listing, queue
from assay.store.clean import escape, storable
from assay.store.db import json_dumps
from assay.store.models import ACTIVE_STATES, FINAL_STATES, EvaluationResult, Run, RunState, is_row_id, utcnow
from assay.store.snapshot import RunEvaluator


def create_run(session: Session, *, task_id: str, evaluators: Sequence[RunEvaluator], samples: int,
               created_by_id: str | None, slice_size: int, dataset_version_id: str | None = None) -> Run:
    """A queued run grading ``samples`` samples of a dataset version with the snapshotted
    evaluators, cut into slices of ``slice_size`` samples in the run queue (``store.queue``), in
    the same transaction."""
    run = Run(task_id=task_id, dataset_version_id=dataset_version_id, status=RunState.QUEUED.value,
              evaluators=[e.to_json() for e in evaluators], total=samples * len(evaluators), done=0,
              created_by_id=created_by_id)
    session.add(run)
    session.flush()
    queue.plan(session, run.id, created_by_id, samples, slice_size)
    return run


def get_run(session: Session, run_id: str) -> Run | None:
    """The run, or None (also for an id that is not a row id at all)."""
    return session.get(Run, run_id) if is_row_id(run_id) else None


def status_of(session: Session, run_id: str) -> str | None:
    """The run's status alone (None when there is no such run): what a grading slot reads
    between chunks, without the run's evaluator snapshot."""
    return session.scalar(select(Run.status).where(Run.id == run_id)) if is_row_id(run_id) else None


def list_runs(session: Session, task_id: str) -> list[Run]:
    return list(session.scalars(select(Run).where(Run.task_id == task_id).order_by(Run.created_at, Run.id)))


def active_run_ids(session: Session) -> list[str]:
    """Runs queued or interrupted while running, oldest first: what a starting server resumes."""
    query = select(Run.id).where(Run.status.in_(ACTIVE_STATES)).order_by(Run.created_at, Run.id)
    return list(session.scalars(query))


def count_by_status(session: Session, statuses: Sequence[str]) -> dict[str, int]:
    """How many runs are in each of ``statuses`` (absent when none); reads the runs table only."""
    query = select(Run.status, func.count()).where(Run.status.in_(tuple(statuses))).group_by(Run.status)
    return {status: int(count) for status, count in session.execute(query).all()}


def set_status(session: Session, run_id: str, status: str, *, error: str | None = None,
               error_id: str | None = None, summary: dict[str, Any] | None = None,
               only_from: Sequence[str] | None = None) -> bool:
    """Set a run's status (and its times, error, summary); with ``only_from``, only if its status
    is one of those, in the same statement, so that a cancel and the grading process cannot
    overwrite each other's word. True when the row was changed."""
    values: dict[str, Any] = {"status": str(status)}  # a plain string for the driver, never an enum
    if status == RunState.RUNNING:
        values["started_at"] = utcnow()
    if status in FINAL_STATES:
        values["finished_at"] = utcnow()
    if error is not None:
        values["error"] = error  # a NulSafeText column
    if error_id is not None:
        values["error_id"] = error_id
    if summary is not None:
        values["summary"] = summary
    statement = update(Run).where(Run.id == run_id)
    if only_from is not None:
        statement = statement.where(Run.status.in_([str(s) for s in only_from]))
    # an UPDATE's result is a CursorResult (Session.execute is typed as returning a plain Result)
    return bool(cast(CursorResult[Any], session.execute(statement.values(**values))).rowcount)


def graded_sample_ids(session: Session, run_id: str, evaluator_id: str) -> set[str]:
    query = select(EvaluationResult.sample_id).where(EvaluationResult.run_id == run_id,
                                                     EvaluationResult.evaluator_id == evaluator_id)
    return set(session.scalars(query))


def graded_in_range(session: Session, run_id: str, start: int, stop: int) -> set[tuple[str, str]]:
    """``(sample id, evaluator id)`` of the results stored for samples ``start`` <= index < ``stop``."""
    query = select(EvaluationResult.sample_id, EvaluationResult.evaluator_id).where(
        EvaluationResult.run_id == run_id, EvaluationResult.sample_index >= start, EvaluationResult.sample_index < stop)
    return {(sample_id, evaluator_id) for sample_id, evaluator_id in session.execute(query).all()}


def add_done(session: Session, run_id: str, graded: int) -> None:
    """Count ``graded`` more results in the run's progress: those ``add_results`` found new (the
    count is made exact again when the run ends)."""
    session.execute(update(Run).where(Run.id == run_id).values(done=Run.done + graded))


def add_results(session: Session, rows: Sequence[dict[str, Any]]) -> int:
    """Insert result rows, skipping any (run, sample, evaluator) already stored; returns how many
    were new (what a run's progress counts: a slice taken over from a server still grading it
    may find some stored meanwhile)."""
    if not rows:
        return 0
    now = utcnow()
    if session.get_bind().dialect.name == "postgresql":
        return _copy_results(session, [_escaped(row) for row in rows], now)
    # The table's own insert, not the ORM's bulk one: the same statement at less cost per row.
    statement = sqlite_insert(cast(Table, EvaluationResult.__table__)).on_conflict_do_nothing(
        index_elements=["run_id", "sample_id", "evaluator_id"])
    return session.connection().execute(statement, [{"created_at": now, **_ids(row)} for row in rows]).rowcount


_IDS = ("sample_id", "evaluator_name")
"""A result's columns where a NUL is made ``storable`` (names and ids); its text and JSON keep theirs."""


def _ids(row: dict[str, Any]) -> dict[str, Any]:
    return {**row, **{key: storable(row[key]) for key in _IDS}}


def _escaped(row: dict[str, Any]) -> dict[str, Any]:
    """A result row as ``COPY`` takes it on PostgreSQL, which bypasses the columns' types: what
    ``NulSafeText`` and ``NulSafeJson`` would write (``store.clean``)."""
    return {**_ids(row), "reason": escape(row["reason"]), "reason_args": escape(row.get("reason_args")),
            "details": escape(row["details"])}


_COPIED = ("run_id", "sample_id", "sample_index", "evaluator_id", "evaluator_name", "status", "passed", "score",
           "reason", "reason_code", "reason_args", "details", "error_code", "latency_ms")
"""Every column of a result row but its id and time: a row without one of them is a bug here."""


def _copy_results(session: Session, rows: list[dict[str, Any]], now: datetime) -> int:
    """PostgreSQL: the rows ``COPY``'d into a temporary table, then moved with one ``INSERT …
    SELECT … ON CONFLICT DO NOTHING`` (``COPY`` itself cannot skip a present row). The driver
    writes the copy in C; a multi-row ``INSERT`` built by SQLAlchemy cost the server several
    times the CPU per result, which is what a fleet of servers grading one run competes for."""
    raw: Any = session.connection().connection.driver_connection
    columns = ", ".join(_COPIED)
    with raw.cursor() as cursor:
        cursor.execute(f"CREATE TEMPORARY TABLE assay_results_in ON COMMIT DROP AS SELECT {columns} "
                       "FROM evaluation_results WITH NO DATA")  # the columns' types, no constraint
        with cursor.copy(f"COPY assay_results_in ({columns}) FROM STDIN") as copy:
            for row in rows:
                args = row.get("reason_args")
                copy.write_row((row["run_id"], row["sample_id"], row["sample_index"], row["evaluator_id"],
                                row["evaluator_name"], row["status"], row["passed"], row["score"], row["reason"],
                                row.get("reason_code"), None if args is None else json_dumps(args),
                                json_dumps(row["details"] or {}), row["error_code"], row["latency_ms"]))
        cursor.execute(f"INSERT INTO evaluation_results ({columns}, created_at) SELECT {columns}, %s "
                       "FROM assay_results_in ON CONFLICT (run_id, sample_id, evaluator_id) DO NOTHING", (now,))
        added = cursor.rowcount
        cursor.execute("DROP TABLE assay_results_in")
    return added


def count_results(session: Session, run_id: str) -> int:
    return session.scalar(select(func.count()).where(EvaluationResult.run_id == run_id)) or 0


def set_done(session: Session, run_id: str, done: int) -> None:
    session.execute(update(Run).where(Run.id == run_id).values(done=done))


def status_counts(session: Session, run_id: str) -> list[tuple[str, str, str, int, float | None]]:
    """Per evaluator and status: ``(evaluator id, evaluator name, status, count, mean score)``."""
    query = (select(EvaluationResult.evaluator_id, EvaluationResult.evaluator_name, EvaluationResult.status,
                    func.count(), func.avg(EvaluationResult.score))
             .where(EvaluationResult.run_id == run_id)
             .group_by(EvaluationResult.evaluator_id, EvaluationResult.evaluator_name, EvaluationResult.status))
    return [(e, n, s, int(c), None if a is None else float(a)) for e, n, s, c, a in session.execute(query).all()]


def results_query(run_id: str, *, status: str | None = None, evaluator_id: str | None = None,
                  failed_only: bool = False, sample_id: str | None = None) -> Select[EvaluationResult]:
    """The results of a run, filtered, in dataset then evaluator order. Filter values are
    compared as stored (a NUL is stored as U+FFFD)."""
    query = select(EvaluationResult).where(EvaluationResult.run_id == storable(run_id))
    if status is not None:
        query = query.where(EvaluationResult.status == str(status))
    if failed_only:
        query = query.where(EvaluationResult.passed.is_(False))
    if evaluator_id is not None:
        query = query.where(EvaluationResult.evaluator_id == storable(evaluator_id))
    if sample_id is not None:
        query = query.where(EvaluationResult.sample_id == storable(sample_id))
    return query.order_by(EvaluationResult.sample_index, EvaluationResult.id)


def list_results(session: Session, query: Select[EvaluationResult], *, limit: int,
                 offset: int) -> tuple[list[EvaluationResult], int]:
    """One page of ``query`` and the number of rows it has in all."""
    total = session.scalar(select(func.count()).select_from(query.order_by(None).subquery())) or 0
    return list(session.scalars(query.limit(limit).offset(offset))), int(total)


ResultKey = tuple[int, int]
"""Where a result stands in a ``results_query``'s order: ``(sample index, id)``."""


def result_key(result: EvaluationResult) -> ResultKey:
    return result.sample_index, result.id


def results_after(session: Session, query: Select[EvaluationResult], after: ResultKey | None, *,
                  limit: int) -> list[EvaluationResult]:
    """The first ``limit`` rows of ``query`` (a ``results_query``) after the key ``after`` (from
    the start when None): a page that costs the same at any depth, unlike an offset."""
    return list(session.scalars((query if after is None else _after(query, after)).limit(limit)))


def iter_results(session: Session, query: Select[EvaluationResult], *,
                 batch: int = 500) -> Iterator[EvaluationResult]:
    """Every row of ``query`` (a ``results_query``: in sample index then id order), fetched
    ``batch`` at a time after the last one seen (keyset paging: each batch costs the same at the
    end of a run of millions as at its start, unlike an offset), so an export or a summary of a
    large run streams."""
    for rows in _keyset_batches(session, query, batch, columns=None):
        yield from rows


_PASSED = EvaluationResult.status == "passed"
VERDICT_COLUMNS = (EvaluationResult.sample_id, EvaluationResult.evaluator_id, EvaluationResult.evaluator_name,
                   EvaluationResult.status, EvaluationResult.score,
                   case((_PASSED, None), else_=EvaluationResult.reason), EvaluationResult.error_code)
"""What a summary reads of each result (``iter_result_rows``' default columns): the reason of
a result that did not pass (what a comparison's flips show; a passed one's is never shown)."""
CODE_COLUMNS = (case((_PASSED, None), else_=EvaluationResult.reason_code),
                case((_PASSED, None), else_=EvaluationResult.reason_args))
"""Read after ``VERDICT_COLUMNS`` where a reason is shown (a comparison's flips): null for a
passed result, whose reason no flip shows (no JSON decoded for most rows of most runs)."""


def iter_result_rows(session: Session, query: Select[EvaluationResult], columns: Sequence[Any] = VERDICT_COLUMNS, *,
                     batch: int = 5000) -> Iterator[tuple[Any, ...]]:
    """``iter_results`` as plain rows of ``columns`` (no ORM object per result: a summary or an
    export of millions reads several times faster)."""
    for rows in _keyset_batches(session, query, batch, columns=columns):
        yield from cast(list[tuple[Any, ...]], rows)


def _keyset_batches(session: Session, query: Select[Any], batch: int,
                    columns: Sequence[Any] | None) -> Iterator[list[Any]]:
    r = EvaluationResult
    if columns is not None:  # the key is read along, after the columns asked for
        query = query.with_only_columns(*columns, r.sample_index, r.id)
    after = query
    while True:
        # Plain rows through the connection: no ORM loading step for each of them.
        rows: list[Any] = list(session.scalars(after.limit(batch)) if columns is None
                               else session.connection().execute(after.limit(batch)).all())
        yield rows
        if len(rows) < batch:
            return
        last = rows[-1]
        after = _after(query, result_key(last) if columns is None else (last[-2], last[-1]))


def _after(query: Select[Any], key: ResultKey) -> Select[Any]:
    """``query``'s rows after ``key``: (index, id) < (sample_index, id), spelt so that both
    databases range-scan the (run, sample index) index instead of reading the run's every result."""
    r = EvaluationResult
    # As 64-bit numbers: a key from a client may be past the columns' 32 bits on PostgreSQL,
    # where it is still compared (int4 with int8 is one index's operator family), not refused.
    index, last_id = (literal(k, BigInteger) for k in key)
    return query.where(r.sample_index >= index, or_(r.sample_index > index, r.id > last_id))


def score_histogram(session: Session, run_id: str, evaluator_id: str | None, bins: int) -> tuple[list[int], int]:
    """Counts of the run's scores in ``bins`` equal bins of [0, 1] (a score below 0 counts in
    the first, one of 1 or more in the last), and how many results had no score; counted by the
    database in one pass (bin i holds ``i <= score * bins < i + 1``, the float product both
    databases and Python compute alike)."""
    r = EvaluationResult
    scaled = r.score * bins
    edges = [scaled < 1] + [and_(scaled >= i, scaled < i + 1) for i in range(1, bins - 1)] + [scaled >= bins - 1]
    query = select(*(func.count(case((edge, 1))) for edge in edges), func.count(case((r.score.is_(None), 1))))
    query = query.where(r.run_id == run_id)
    if evaluator_id is not None:
        query = query.where(r.evaluator_id == storable(evaluator_id))
    *counts, unscored = session.execute(query).one()
    return [int(c) for c in counts], int(unscored)


RUN_SORTABLE = {"createdAt": Run.created_at, "status": Run.status, "finishedAt": Run.finished_at}
"""The columns a task's run list may be sorted by, by their API names."""


def find_runs(session: Session, task_id: str, *, status: str | None = None,
              window: listing.Window | None = None) -> tuple[list[Run], int]:
    """A page of a task's runs (of one status when given), sorted by one of ``RUN_SORTABLE``
    (by default, the oldest first), and how many match."""
    query = select(Run).where(Run.task_id == task_id).order_by(Run.created_at, Run.id)
    if status is not None:
        query = query.where(Run.status == str(status))
    return listing.page(session, query, window or listing.Window(), RUN_SORTABLE, Run.id)
