"""The traces a user sent, as the pages show them: the most recent ones (of a bounded window of
their latest spans), those a filter takes and those with a verdict of a kind; and one trace's
spans with the verdicts given on them."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from assay.service.online.filters import parse
from assay.service.online.mapping import model_of
from assay.store import online as rows
from assay.store.online_models import OnlineResult, OnlineRule, OnlineSpan

SCANNED = 5000
"""The latest spans a search looks at: a search costs the same however many spans are stored."""


@dataclass(slots=True)
class TraceRow:
    trace_id: str
    name: str
    """The root span's name when it was looked at, else the earliest span's."""
    start_ns: int
    end_ns: int
    spans: int = 0
    matched: bool = False
    rooted: bool = False
    verdicts: dict[str, int] = field(default_factory=dict)


def search(session: Session, user_id: str, text: str, verdict: str | None, limit: int) -> tuple[int, list[TraceRow]]:
    """(spans looked at, the traces found, newest first): a trace is in when one of its spans
    that were looked at is taken by the filter ``text`` (already valid) and, with ``verdict``,
    when a result of that status was given on it."""
    matches = parse(text)
    recent = rows.recent_span_rows(session, user_id, SCANNED)
    traces: dict[str, TraceRow] = {}
    for span in recent:
        row = traces.setdefault(span.trace_id, TraceRow(span.trace_id, span.name, span.start_ns, span.end_ns))
        row.spans += 1
        row.matched = row.matched or matches(span)
        if span.parent_span_id is None:
            row.name, row.rooted = span.name, True
        elif not row.rooted and span.start_ns < row.start_ns:
            row.name = span.name
        row.start_ns, row.end_ns = min(row.start_ns, span.start_ns), max(row.end_ns, span.end_ns)
    found = [row for row in traces.values() if row.matched]
    for trace_id, status, count in rows.verdict_counts(session, user_id, [row.trace_id for row in found]):
        traces[trace_id].verdicts[status] = count
    if verdict is not None:
        found = [row for row in found if row.verdicts.get(verdict)]
    found.sort(key=lambda row: row.start_ns, reverse=True)
    return len(recent), found[:limit]


@dataclass(frozen=True, slots=True)
class Verdict:
    """A result given on a span, with the rule that gave it: its name and scope (a ``trace`` or
    ``conversation`` rule's verdict sits on the root span of what it graded)."""

    result: OnlineResult
    rule_name: str
    scope: str


def trace(session: Session, user_id: str, trace_id: str, limit: int) -> list[dict[str, Any]]:
    """The trace's spans in start order, each with its depth in the tree and its verdicts."""
    spans = rows.trace_spans(session, user_id, trace_id, limit)
    verdicts: dict[str, list[Verdict]] = defaultdict(list)
    given = select(OnlineResult, OnlineRule.name, OnlineRule.scope).join(
        OnlineRule, OnlineRule.id == OnlineResult.rule_id).where(OnlineRule.user_id == user_id,
                                                                 OnlineResult.trace_id == trace_id)
    for result, rule_name, scope in session.execute(given):
        verdicts[result.span_id].append(Verdict(result, rule_name, scope))
    ids = {span.span_id: span for span in spans}

    def depth(span: OnlineSpan) -> int:
        seen, level = set(), 0
        while span.parent_span_id in ids and span.span_id not in seen and level < 64:
            seen.add(span.span_id)
            span, level = ids[span.parent_span_id], level + 1
        return level

    return [{"span": span, "depth": depth(span), "model": model_of(span.attributes),
             "results": sorted(verdicts.get(span.span_id, []), key=lambda v: v.result.id)} for span in spans]
