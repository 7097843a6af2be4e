"""``GET /api/v1/runs/{id}/export``: a run's results as JSONL or CSV, filtered as the results
listing is (status, evaluator, sample, failed only), each with its sample's input, output and
expected. Both formats hold the same fields in the same order; a reason is said in ``lang``
when asked (the page's language), its code and arguments beside it for machines."""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from typing import Annotated, Any, Literal

import orjson
from fastapi import APIRouter, Query
from fastapi.responses import StreamingResponse

from assay.core.result import Status
from assay.server.deps import CurrentUser, ServiceDep, SessionDep
from assay.server.errors import not_found
from assay.server.pages.i18n import LANGUAGES, catalogue, say
from assay.server.schemas.common import ERROR_RESPONSES, iso
from assay.server.service import Service
from assay.store import datasets as dataset_rows
from assay.store import runs as rows
from assay.store.models import EvaluationResult

router = APIRouter(prefix="/runs", tags=["runs"], responses=ERROR_RESPONSES)

EXPORT_COLUMNS = ("runId", "sampleId", "input", "output", "expected", "evaluatorId", "evaluatorName", "status",
                  "passed", "score", "reason", "reasonCode", "reasonArgs", "error", "latencyMs", "details",
                  "createdAt")
"""The fields of an exported result, in both formats and in this order."""

LATENCY_DIGITS = 2
"""Latencies are exported to a hundredth of a millisecond: what a timer measures, not float noise."""

Language = Literal[LANGUAGES]  # type: ignore[valid-type]  # a tuple of literals spelled once, in i18n


@router.get("/{run_id}/export", summary="Export a run's results as JSONL or CSV",
            responses={200: {"content": {"application/x-ndjson": {}, "text/csv": {}},
                             "description": "One result per line (JSONL) or row (CSV), the same fields in "
                                            "both: " + ", ".join(EXPORT_COLUMNS) + ". In CSV, a text cell "
                                            "that a spreadsheet would take for a formula (it starts with =, "
                                            "+, -, @, a tab or a line break) starts with ' instead."}})
def export_results(
    run_id: str, service: ServiceDep, session: SessionDep, _user: CurrentUser,
    format: Annotated[Literal["jsonl", "csv"], Query(description="jsonl or csv.")] = "jsonl",
    status: Annotated[Status | None, Query(description="Only results with this status.")] = None,
    evaluator_id: Annotated[str | None, Query(alias="evaluatorId", description="Only this evaluator's.")] = None,
    sample_id: Annotated[str | None, Query(alias="sampleId", description="Only this sample's.")] = None,
    failed_only: Annotated[bool, Query(alias="failedOnly", description="Only results that did not pass.")] = False,
    lang: Annotated[Language | None, Query(description="Say each reason in this language (zh or en); "
                                                       "without it, as stored (English). reasonCode and "
                                                       "reasonArgs carry it for machines either way.")] = None,
) -> StreamingResponse:
    if rows.get_run(session, run_id) is None:
        raise not_found("run", run_id)
    query = rows.results_query(run_id, status=status, evaluator_id=evaluator_id, failed_only=failed_only,
                               sample_id=sample_id)
    records = _records(service, query, run_id, lang)
    lines = _jsonl(records) if format == "jsonl" else _csv(records)
    media = "application/x-ndjson" if format == "jsonl" else "text/csv; charset=utf-8"
    return StreamingResponse(lines, media_type=media,
                             headers={"Content-Disposition": f'attachment; filename="run-{run_id}.{format}"'})


_EXPORTED = (EvaluationResult.run_id, EvaluationResult.sample_id, EvaluationResult.evaluator_id,
             EvaluationResult.evaluator_name, EvaluationResult.status, EvaluationResult.passed,
             EvaluationResult.score, EvaluationResult.reason, EvaluationResult.reason_code,
             EvaluationResult.reason_args, EvaluationResult.details, EvaluationResult.error_code,
             EvaluationResult.latency_ms, EvaluationResult.created_at)


def _records(service: Service, query: Any, run_id: str, lang: str | None) -> Iterator[dict[str, Any]]:
    """Each result of ``query`` as exported (``EXPORT_COLUMNS``), read as plain rows (no ORM
    object or model per result: an export of millions streams several times faster), with
    the input, output and expected of the dataset row it graded."""
    samples = _GradedRows(service, run_id)
    if lang is not None:
        catalogue(lang)  # read once here, not per row
    with service.database.session() as session:
        for (run, sample_id, evaluator_id, evaluator_name, status, passed, score, reason, reason_code,
             reason_args, details, error, latency_ms, created_at, position, _) in rows.iter_result_rows(session, query,
                                                                                                       _EXPORTED):
            sample = samples.at(position)
            yield {"runId": run, "sampleId": sample_id, "input": sample.get("input"),
                   "output": sample.get("output"), "expected": sample.get("expected"),
                   "evaluatorId": evaluator_id, "evaluatorName": evaluator_name, "status": status,
                   "passed": passed, "score": score,
                   "reason": reason if lang is None else say(lang, reason_code, reason_args, reason),
                   "reasonCode": reason_code, "reasonArgs": reason_args, "error": error,
                   "latencyMs": None if latency_ms is None else round(latency_ms, LATENCY_DIGITS),
                   "details": details or {}, "createdAt": iso(created_at)}


CHUNK_BYTES = 64 << 10
"""What an export hands the server at once: the response's iterator is driven from a thread,
one hop per item, so one line per item would cost more than writing it."""


def _jsonl(records: Iterator[dict[str, Any]]) -> Iterator[bytes]:
    lines, size = [], 0
    for record in records:
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


def _cell(value: Any) -> Any:
    """A field as a CSV cell: text as it is, true/false, an empty cell for null, JSON for the rest."""
    if value is None or isinstance(value, (str, int, float)) and not isinstance(value, bool):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    return orjson.dumps(value).decode()


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


def _csv(records: Iterator[dict[str, Any]]) -> Iterator[bytes]:
    """The results after a UTF-8 byte order mark (without it Excel reads the file in the
    machine's code page and garbles Chinese)."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=EXPORT_COLUMNS)
    writer.writeheader()
    yield "\ufeff".encode() + buffer.getvalue().encode()
    buffer.seek(0)
    buffer.truncate()
    for record in records:
        writer.writerow({key: inert_cell(_cell(value)) for key, value in record.items()})
        if buffer.tell() >= CHUNK_BYTES:
            yield buffer.getvalue().encode()
            buffer.seek(0)
            buffer.truncate()
    if buffer.tell():
        yield buffer.getvalue().encode()
