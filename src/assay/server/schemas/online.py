"""Bodies of ``/api/v1/online-rules``: rules, their results, their summaries."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import Field

from assay.server.schemas.common import ApiModel, NoNul
from assay.server.schemas.evaluators import Name
from assay.server.schemas.tasks import MAX_EVALUATORS, TaskEvaluatorIn, TaskEvaluatorOut
from assay.service.online.filters import MAX_CHARS

ScopeName = Literal["span", "trace", "conversation"]
Filter = Annotated[str, Field(max_length=MAX_CHARS, description="An expression over the span's attributes "
                                                                 "(docs/guides/online.md); empty: every span."), NoNul]
Rate = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False, description=(
    "The share of traces graded, by a hash of the trace id (of the conversation id for conversations): the same "
    "trace is in or out of every rule at the same rate."))]
Quiet = Annotated[int, Field(ge=0, le=86_400, description="Seconds without a new span before a trace or a "
                                                          "conversation is graded.")]
Budget = Annotated[int | None, Field(ge=0, le=10_000_000, description="Judge gradings a day (UTC); past it, judge "
                                                                       "evaluators are skipped. null: no limit.")]


class OnlineRuleIn(ApiModel):
    name: Name
    filter: Filter = ""
    sample_rate: Rate = 1.0
    scope: ScopeName = "span"
    quiet_s: Quiet = 30
    evaluators: list[TaskEvaluatorIn] = Field(min_length=1, max_length=MAX_EVALUATORS)
    enabled: bool = True
    judge_budget_per_day: Budget = None


class OnlineRuleUpdate(ApiModel):
    """The fields given replace the stored ones (``evaluators`` the whole list)."""

    name: Name | None = None
    filter: Filter | None = None
    sample_rate: Rate | None = None
    scope: ScopeName | None = None
    quiet_s: Quiet | None = None
    evaluators: list[TaskEvaluatorIn] | None = Field(default=None, min_length=1, max_length=MAX_EVALUATORS)
    enabled: bool | None = None
    judge_budget_per_day: Budget = None


class OnlineRuleOut(ApiModel):
    id: str
    name: str
    filter: str
    sample_rate: float
    scope: str
    quiet_s: int
    evaluators: list[TaskEvaluatorOut]
    enabled: bool
    judge_budget_per_day: int | None
    created_by_id: str
    owner: str | None = Field(default=None, description="The name of the user who created it (who may change it).")
    created_at: str
    updated_at: str


class OnlineResultOut(ApiModel):
    id: int
    trace_id: str
    span_id: str
    target: str
    generation: int
    evaluator_id: str
    evaluator_name: str
    evaluator_version: str
    status: str
    passed: bool
    score: float | None
    reason: str | None
    error_code: str | None
    details: dict[str, Any]
    latency_ms: float
    at: str
    graded_at: str


class ResultsPage(ApiModel):
    results: list[OnlineResultOut]
    next_cursor: str | None = Field(description="Give it as `cursor` for the next page; null on the last.")


class BackfillIn(ApiModel):
    start: datetime = Field(alias="from", description="Spans that started at or after this time (ISO 8601).")
    stop: datetime = Field(alias="to", description="... and before this one.")


class BackfillOut(ApiModel):
    spans_read: int
    jobs_added: int


class FilterCheckIn(ApiModel):
    filter: Filter
    preview: bool = Field(default=False, description="Also list the caller's recent spans the filter takes.")


class SpanPreviewOut(ApiModel):
    trace_id: str
    span_id: str
    name: str
    model: str | None
    start: str


class FilterCheckOut(ApiModel):
    valid: bool
    message: str | None = None
    message_code: str | None = None
    message_args: dict[str, Any] | None = None
    position: int | None = None
    scanned: int = Field(default=0, description="How many of the caller's most recent spans were looked at.")
    matches: list[SpanPreviewOut] = Field(default_factory=list, description="Up to 20 of them the filter takes.")


class TraceOut(ApiModel):
    trace_id: str
    name: str
    start: str
    duration_ms: float
    spans: int
    verdicts: dict[str, int]


class TraceList(ApiModel):
    scanned: int = Field(description="How many of your latest spans the search looked at.")
    traces: list[TraceOut]


class SpanVerdictOut(ApiModel):
    rule_id: str
    rule_name: str
    scope: str = Field(description="The rule's scope: a trace or conversation rule's verdict is on the root span "
                                   "of what it graded.")
    evaluator_name: str
    generation: int
    status: str
    score: float | None
    reason: str | None


class TraceSpanOut(ApiModel):
    span_id: str
    parent_span_id: str | None
    name: str
    depth: int
    start: str
    duration_ms: float
    status: str
    model: str | None
    attributes: dict[str, Any]
    verdicts: list[SpanVerdictOut]
