"""``/api/v1/traces``: the caller's traces (searched over their latest spans with an online
rule's filter language, and by verdict) and one trace's spans with their verdicts. Thin: the
use cases are in ``service.online.traces``."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query

from assay.server.deps import CurrentUser, SessionDep
from assay.server.errors import ApiError, not_found
from assay.server.schemas.common import ERROR_RESPONSES, Envelope, iso
from assay.server.schemas.online import SpanVerdictOut, TraceList, TraceOut, TraceSpanOut
from assay.service.online import rules, traces
from assay.service.online.filters import FilterError
from assay.service.online.filters import parse as parse_filter
from assay.store.online_models import TARGET_MAX

router = APIRouter(prefix="/traces", tags=["online"], responses=ERROR_RESPONSES)
MAX_SPANS = 2000


def _time(ns: int) -> str:
    return iso(datetime.fromtimestamp(ns / 1e9, UTC))


@router.get("", response_model=Envelope[TraceList], summary="Your latest traces, searched")
def list_traces(session: SessionDep, user: CurrentUser,
                filter: Annotated[str, Query(max_length=2000, description="An online rule's filter "
                                                                          "(docs/guides/online.md): a trace with a "
                                                                          "span it takes.")] = "",
                verdict: Annotated[str | None, Query(max_length=20, description="Only traces with a result of "
                                                                                "this status.")] = None,
                limit: Annotated[int, Query(ge=1, le=500)] = 50) -> Any:
    try:
        parse_filter(filter)
    except FilterError as exc:
        raise ApiError(422, rules.BAD_FILTER(problem=exc.said)) from None
    scanned, found = traces.search(session, user.id, filter, verdict, limit)
    return Envelope(data=TraceList(scanned=scanned, traces=[TraceOut(
        trace_id=row.trace_id, name=row.name, start=_time(row.start_ns), duration_ms=(row.end_ns - row.start_ns) / 1e6,
        spans=row.spans, verdicts=row.verdicts) for row in found]))


@router.get("/{trace_id}", response_model=Envelope[list[TraceSpanOut]], summary="A trace's spans and their verdicts")
def get_trace(trace_id: str, session: SessionDep, user: CurrentUser) -> Any:
    found = traces.trace(session, user.id, trace_id.lower()[:TARGET_MAX], MAX_SPANS) if len(trace_id) == 32 else []
    if not found:
        raise not_found("trace", trace_id)
    return Envelope(data=[TraceSpanOut(
        span_id=item["span"].span_id, parent_span_id=item["span"].parent_span_id, name=item["span"].name,
        depth=item["depth"], start=_time(item["span"].start_ns),
        duration_ms=(item["span"].end_ns - item["span"].start_ns) / 1e6,
        status={0: "unset", 1: "ok", 2: "error"}.get(item["span"].status_code, "unset"), model=item["model"],
        attributes=item["span"].attributes,
        verdicts=[SpanVerdictOut(rule_id=v.result.rule_id, rule_name=v.rule_name, scope=v.scope,
                                 evaluator_name=v.result.evaluator_name, generation=v.result.generation,
                                 status=v.result.status, score=v.result.score, reason=v.result.reason)
                  for v in item["results"]])
        for item in found])
