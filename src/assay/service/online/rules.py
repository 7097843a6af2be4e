"""Online rules as a use case: checked when saved (the filter parsed, the evaluators found),
stored as validated, and run over spans already stored (backfill)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from assay.core.errors import AssayError
from assay.core.messages import Phrase
from assay.service.online.filters import FilterError, parse
from assay.service.online.otlp import MAX_TIME_NS
from assay.service.online.schedule import LiveRule, plan, record_of
from assay.store import online as rows
from assay.store.models import Evaluator, utcnow
from assay.store.online_models import OnlineRule

BAD_FILTER = Phrase("online.bad_filter", "filter: {problem}")
NO_EVALUATOR = Phrase("online.no_evaluator", "evaluators[{index}].evaluatorId: evaluator {id} not found")
TWICE = Phrase("online.evaluator_twice", "evaluators[{index}].evaluatorId: {id} is listed twice")
BACKFILL_PAGE = 1000


class RuleError(AssayError, ValueError):
    """A rule that cannot be saved (422): the message names the field and, for a filter, the position."""

    def __init__(self, said: str) -> None:
        super().__init__(said)
        self.said = said
        """The phrase said (its code and arguments travel with it to the pages)."""


@dataclass(frozen=True, slots=True)
class RuleFields:
    name: str
    filter: str
    sample_rate: float
    scope: str
    quiet_s: int
    evaluators: list[dict[str, Any]]
    enabled: bool
    judge_budget_per_day: int | None


def check_filter(text: str) -> None:
    try:
        parse(text)
    except FilterError as exc:
        raise RuleError(BAD_FILTER(problem=exc.said)) from None


def check(session: Session, fields: RuleFields) -> None:
    check_filter(fields.filter)
    seen: set[str] = set()
    for index, link in enumerate(fields.evaluators):
        evaluator_id = link["evaluatorId"]
        if evaluator_id in seen:
            raise RuleError(TWICE(index=index, id=repr(evaluator_id)))
        seen.add(evaluator_id)
        if session.get(Evaluator, evaluator_id) is None:
            raise RuleError(NO_EVALUATOR(index=index, id=repr(evaluator_id)))


def create(session: Session, user_id: str, fields: RuleFields) -> OnlineRule:
    check(session, fields)
    rule = OnlineRule(user_id=user_id, name=fields.name, filter=fields.filter, sample_rate=fields.sample_rate,
                      scope=fields.scope, quiet_s=fields.quiet_s, evaluators=fields.evaluators, enabled=fields.enabled,
                      judge_budget_per_day=fields.judge_budget_per_day)
    session.add(rule)
    session.flush()
    return rule


def update(session: Session, rule: OnlineRule, fields: RuleFields) -> OnlineRule:
    """Save ``fields``; a rule switched off drops its jobs not yet taken (a slice already
    leased grades none of its jobs: ``grader``), so a disabled rule grades nothing more."""
    check(session, fields)
    if rule.enabled and not fields.enabled:
        rows.drop_pending_jobs(session, rule.id)
    for name in RuleFields.__dataclass_fields__:
        setattr(rule, name, getattr(fields, name))
    rule.updated_at = utcnow()
    session.flush()
    return rule


def fields_of(rule: OnlineRule) -> RuleFields:
    return RuleFields(**{name: getattr(rule, name) for name in RuleFields.__dataclass_fields__})


PREVIEW_SCANNED = 500
PREVIEW_SHOWN = 20


def preview(session: Session, user_id: str, text: str) -> tuple[int, list[Any]]:
    """How many of the user's most recent spans were read (at most ``PREVIEW_SCANNED``), and up
    to ``PREVIEW_SHOWN`` of them that ``text`` (a valid filter) takes, newest first."""
    matches = parse(text)
    recent = rows.recent_span_rows(session, user_id, PREVIEW_SCANNED)
    return len(recent), [span for span in recent if matches(span)][:PREVIEW_SHOWN]


def of_user(session: Session, user_id: str | None) -> list[OnlineRule]:
    query = select(OnlineRule).order_by(OnlineRule.created_at, OnlineRule.id)
    if user_id is not None:
        query = query.where(OnlineRule.user_id == user_id)
    return list(session.scalars(query))


def backfill(session: Session, rule: OnlineRule, start: datetime, stop: datetime) -> tuple[int, int]:
    """Schedule ``rule`` over its owner's spans that started in [start, stop): what it graded
    already is skipped (jobs are unique per rule, target and generation). Returns (spans read,
    jobs added). Spans are read a page at a time."""
    live = LiveRule.of(rule)
    start_ns, stop_ns = _span_time(start), _span_time(stop)
    after, read, added = 0, 0, 0
    now = utcnow()
    while True:
        page = rows.spans_between(session, rule.user_id, start_ns, stop_ns, after, BACKFILL_PAGE)
        if not page:
            return read, added
        read += len(page)
        after = page[-1].id
        added += plan(session, [_backfilled(live)], [record_of(span) for span in page], now, late=False)


def _span_time(moment: datetime) -> int:
    """``moment`` in Unix nanoseconds, within the times a stored span may have (0 to 2^63 - 1:
    the intake refuses others), so that a window from year 1 to 9999 reads every span."""
    return min(max(int(moment.timestamp() * 1e9), 0), MAX_TIME_NS)


def _backfilled(rule: LiveRule) -> LiveRule:
    """Spans already stored are past their quiet window: their traces are due at once."""
    return LiveRule(rule.id, rule.user_id, rule.scope, rule.sample_rate, 0, rule.matches)
