"""``/api/v1/runs``: a run's progress and summary, its results (filtered, paged) and their
export as JSONL or CSV."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator
from typing import Annotated, Any, Literal

import orjson
from fastapi import APIRouter, Query
from fastapi.responses import StreamingResponse
from sqlalchemy.orm import Session

from assay.core.messages import Phrase
from assay.core.result import Status
from assay.server.deps import CurrentUser, ServiceDep, SessionDep
from assay.server.errors import ApiError, not_found, shown
from assay.server.ownership import check_may_change, owner_name
from assay.server.schemas.common import ERROR_RESPONSES, Envelope, iso
from assay.server.schemas.tasks import ResultOut, ResultPage, RunOut
from assay.server.service import Service
from assay.store import datasets as dataset_rows
from assay.store import runs as rows
from assay.store import tasks as task_rows
from assay.store.models import ACTIVE_STATES, EvaluationResult, Run, RunState

router = APIRouter(prefix="/runs", tags=["runs"], responses=ERROR_RESPONSES)

NOT_YOURS = {verb: Phrase(f"api.run.not_yours_{verb}", "run {name} was started by {owner}; only they or an admin "
                                                       f"can {verb} it")
             for verb in ("cancel", "delete")}
FINISHED = Phrase("api.run.not_active", "run {name} is {status}; only queued or running runs can be cancelled")
STILL_ACTIVE = Phrase("api.run.active", "run {name} is {status}; cancel it before deleting it")
BAD_CURSOR = Phrase("api.run.bad_cursor", "query parameter cursor: {cursor} is not a nextCursor this API gave; "
                                          "start again without it")
CURSOR_AND_OFFSET = Phrase("api.run.cursor_and_offset", "query parameters cursor and offset: give one, not both")

EXPORT_COLUMNS = ("runId", "sampleId", "input", "output", "expected", "evaluatorId", "evaluatorName", "status",
                  "passed", "score", "reason", "error", "latencyMs", "details", "createdAt")


def run_out(run: Run, started_by: str | None = None) -> RunOut:
    """The run as answered; ``started_by``, the name of who started it, when the caller looked it up."""
    progress = run.done / run.total if run.total else 1.0
    return RunOut(id=run.id, task_id=run.task_id, dataset_version_id=run.dataset_version_id,
                  status=RunState(run.status), total=run.total, done=run.done, progress=round(min(progress, 1.0), 4),
                  summary=run.summary, error=run.error, error_id=run.error_id, created_by_id=run.created_by_id,
                  started_by=started_by,
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
    return Envelope(data=run_out(run, owner_name(session, run.created_by_id)))


@router.post("/{run_id}/cancel", response_model=Envelope[RunOut], summary="Cancel a queued or running run")
def cancel_run(run_id: str, service: ServiceDep, session: SessionDep, user: CurrentUser) -> Any:
    run = _found(session, run_id)
    check_may_change(session, user, run.created_by_id, NOT_YOURS["cancel"], task_rows.run_name(session, run))
    # Only from queued or running, in one statement: a run that finished meanwhile stays finished.
    # The row tells the grading process, whichever it is.
    if not rows.set_status(session, run_id, RunState.CANCELLED, only_from=ACTIVE_STATES):
        session.refresh(run)
        raise ApiError(409, FINISHED(name=repr(task_rows.run_name(session, run)), status=run.status))
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
    if match is None or max(int(match[1]), int(match[2])) > _LARGEST:
        raise ApiError(422, BAD_CURSOR(cursor=shown(cursor)))
    return int(match[1]), int(match[2])


_LARGEST = 2**63 - 1
"""A key past every database's integer is no cursor (the drivers would refuse to send it)."""


_CURSOR = re.compile(r"(\d{1,19})\.(\d{1,19})", re.ASCII)


@router.get("/{run_id}/export", summary="Export a run's results as JSONL or CSV",
            responses={200: {"content": {"application/x-ndjson": {}, "text/csv": {}},
                             "description": "One result per line (JSONL) or row (CSV). In CSV, a text "
                                            "cell that a spreadsheet would take for a formula (it starts "
                                            "with =, +, -, @, a tab or a line break) starts with ' instead."}})
def export_results(
    run_id: str, service: ServiceDep, session: SessionDep, _user: CurrentUser,
    format: Annotated[Literal["jsonl", "csv"], Query(description="jsonl or csv.")] = "jsonl",
    status: Annotated[Status | None, Query()] = None,
    evaluator_id: Annotated[str | None, Query(alias="evaluatorId")] = None,
    failed_only: Annotated[bool, Query(alias="failedOnly")] = False,
) -> StreamingResponse:
    _found(session, run_id)
    query = rows.results_query(run_id, status=status, evaluator_id=evaluator_id, failed_only=failed_only)
    lines = _jsonl(service, query) if format == "jsonl" else _csv(service, query, run_id)
    media = "application/x-ndjson" if format == "jsonl" else "text/csv; charset=utf-8"
    filename = f"run-{run_id}.{format}"
    return StreamingResponse(lines, media_type=media,
                             headers={"Content-Disposition": f'attachment; filename="{filename}"'})


_EXPORTED = (EvaluationResult.run_id, EvaluationResult.sample_id, EvaluationResult.evaluator_id,
             EvaluationResult.evaluator_name, EvaluationResult.status, EvaluationResult.passed,
             EvaluationResult.score, EvaluationResult.reason, EvaluationResult.reason_code,
             EvaluationResult.reason_args, EvaluationResult.details, EvaluationResult.error_code,
             EvaluationResult.latency_ms, EvaluationResult.created_at)


def _records(service: Service, query: Any) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(sample position, result as exported)`` of each result of ``query``: ``ResultOut``'s
    fields without its id, read as plain rows (no ORM object or model per result: an export of
    millions streams several times faster)."""
    with service.database.session() as session:
        for (run_id, sample_id, evaluator_id, evaluator_name, status, passed, score, reason, reason_code,
             reason_args, details, error, latency_ms, created_at, position, _) in rows.iter_result_rows(session, query,
                                                                                                       _EXPORTED):
            yield position, {"runId": run_id, "sampleId": sample_id, "evaluatorId": evaluator_id,
                             "evaluatorName": evaluator_name, "status": status, "passed": passed, "score": score,
                             "reason": reason, "reasonCode": reason_code, "reasonArgs": reason_args,
                             "details": details or {}, "error": error, "latencyMs": latency_ms,
                             "createdAt": iso(created_at)}


CHUNK_BYTES = 64 << 10
"""What an export hands the server at once: the response's iterator is driven from a thread,
one hop per item, so one line per item would cost more than writing it."""


def _jsonl(service: Service, query: Any) -> Iterator[bytes]:
    lines, size = [], 0
    for _, record in _records(service, query):
        line = orjson.dumps(record)
        lines.append(line)
        size += len(line) + 1
        if size >= CHUNK_BYTES:
            yield b"\n".join(lines) + b"\n"
            lines, size = [], 0
    if lines:
        yield b"\n".join(lines) + b"\n"


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r", "\n", "\uff1d", "\uff0b", "\uff0d", "\uff20")
"""What makes a spreadsheet read a cell as a formula (the fullwidth forms too, which some
applications fold to ASCII)."""


def inert_cell(value: Any) -> Any:
    """A text cell a spreadsheet shows as text: one that would start a formula (``=HYPERLINK(...)``
    in a sample id or a reason an evaluator returned) gets a leading ``'``, OWASP's defence
    against CSV injection. Numbers are left as they are."""
    if isinstance(value, str) and value.startswith(FORMULA_STARTS):
        return "'" + value
    return value


class _GradedRows:
    """The rows of the dataset version a run graded, looked up by position in increasing order
    (results come in sample order): read alongside the results, never held whole."""

    def __init__(self, service: Service, run_id: str) -> None:
        self._rows = self._read(service, run_id)
        self._next = next(self._rows, None)

    @staticmethod
    def _read(service: Service, run_id: str) -> Iterator[tuple[int, dict[str, Any]]]:
        with service.database.session() as session:
            run = rows.get_run(session, run_id)
            if run is not None and run.dataset_version_id is not None:
                yield from dataset_rows.iter_rows(session, run.dataset_version_id)

    def at(self, position: int) -> dict[str, Any]:
        while self._next is not None and self._next[0] < position:
            self._next = next(self._rows, None)
        return self._next[1] if self._next is not None and self._next[0] == position else {}


def _csv(service: Service, query: Any, run_id: str) -> Iterator[bytes]:
    """The results with each sample's input, output and expected, after a UTF-8 byte order mark
    (without it Excel reads the file in the machine's code page and garbles Chinese)."""
    samples = _GradedRows(service, run_id)
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=EXPORT_COLUMNS, extrasaction="ignore")
    writer.writeheader()
    yield "\ufeff".encode() + buffer.getvalue().encode()
    buffer.seek(0)
    buffer.truncate()
    for position, record in _records(service, query):
        record["details"] = orjson.dumps(record["details"]).decode()
        record["passed"] = "true" if record["passed"] else "false"
        sample = samples.at(position)
        for column in ("input", "output", "expected"):
            value = sample.get(column)
            record[column] = value if value is None or isinstance(value, str) else orjson.dumps(value).decode()
        writer.writerow({key: inert_cell(value) for key, value in record.items()})
        if buffer.tell() >= CHUNK_BYTES:
            yield buffer.getvalue().encode()
            buffer.seek(0)
            buffer.truncate()
    if buffer.tell():
        yield buffer.getvalue().encode()


def _found(session: Session, run_id: str) -> Run:
    run = rows.get_run(session, run_id)
    if run is None:
        raise not_found("run", run_id)
    return run
