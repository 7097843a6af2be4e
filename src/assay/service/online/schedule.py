"""Which jobs newly stored spans make: each enabled rule of their owner looks at them.

- ``span`` scope: a job per matching span, due at once;
- ``trace`` scope: a trace is in once any of its spans matches; its job is due a quiet window
  (``quietS``) after its last span arrived, and only once its root span has arrived. Spans that
  arrive after it was graded make one more grading (generation 2), never more;
- ``conversation`` scope: as a trace, keyed by ``gen_ai.conversation.id`` (or ``session.id``),
  without a root.

Sampling is deterministic: a key (the trace id; the conversation id for conversations) is in
when the first 64 bits of its SHA-256, as a fraction of 2**64, are below the rate, so a trace
in at 10% is in at 20% too, in every rule and on every server.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from assay.service.online.filters import Predicate, parse
from assay.service.online.otlp import SpanRecord
from assay.store import online as rows
from assay.store.online_models import JobState, OnlineJob, OnlineRule, OnlineSpan, Scope

MAX_GENERATION = 2
"""A trace is graded once, and once more if spans arrive after that."""


def sampled(key: str, rate: float) -> bool:
    if rate >= 1.0:
        return True
    if rate <= 0.0:
        return False
    return int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big") < rate * 2**64


@dataclass(frozen=True, slots=True)
class LiveRule:
    """A rule as the intake applies it: its row's fields and its parsed filter."""

    id: str
    user_id: str
    scope: str
    sample_rate: float
    quiet_s: int
    matches: Predicate

    @classmethod
    def of(cls, rule: OnlineRule) -> LiveRule:
        return cls(rule.id, rule.user_id, rule.scope, rule.sample_rate, rule.quiet_s, parse(rule.filter))


def record_of(span: OnlineSpan) -> SpanRecord:
    """A stored span as the intake decoded it: what ``plan`` and the filters read."""
    return SpanRecord(**{name: getattr(span, name) for name in SpanRecord.__dataclass_fields__})


def span_target(trace_id: str, span_id: str) -> str:
    return f"{trace_id}:{span_id}"


def plan(session: Session, rules: Sequence[LiveRule], spans: Sequence[SpanRecord], now: datetime, *,
         late: bool = True) -> int:
    """Add or push back the jobs ``spans`` (just stored) make for ``rules``; returns jobs added.
    ``late=False`` (a backfill over stored spans): a target graded already is left as it is."""
    added = 0
    for rule in rules:
        if rule.scope == Scope.SPAN:
            jobs = [_job(rule, span_target(s.trace_id, s.span_id), now, now, True) for s in spans
                    if sampled(s.trace_id, rule.sample_rate) and rule.matches(s)]
            added += rows.add_jobs(session, jobs)
        else:
            added += _plan_groups(session, rule, spans, now, late)
    return added


def _job(rule: LiveRule, target: str, now: datetime, due: datetime, ready: bool, generation: int = 1) -> dict[str, Any]:
    return {"rule_id": rule.id, "user_id": rule.user_id, "scope": rule.scope, "target": target,
            "generation": generation, "state": JobState.PENDING.value, "ready": ready, "due_at": due,
            "attempts": 0, "created_at": now}


def _plan_groups(session: Session, rule: LiveRule, spans: Sequence[SpanRecord], now: datetime, late: bool) -> int:
    groups: dict[str, list[SpanRecord]] = defaultdict(list)
    for span in spans:
        key = span.trace_id if rule.scope == Scope.TRACE else span.conversation_id
        if key and sampled(key, rule.sample_rate):
            groups[key].append(span)
    if not groups:
        return 0
    due = now + timedelta(seconds=rule.quiet_s)
    latest: dict[str, OnlineJob] = {}
    for job in rows.jobs_of(session, [rule.id], groups):
        if job.target not in latest or job.generation > latest[job.target].generation:
            latest[job.target] = job
    conversation = rule.scope == Scope.CONVERSATION
    rooted = {key for key, members in groups.items() if conversation or any(s.parent_span_id is None for s in members)}
    new: list[dict[str, Any]] = []
    for ready_now in (True, False):
        pending = [job.id for key, job in latest.items()
                   if job.state == JobState.PENDING and (key in rooted) == ready_now]
        rows.push_back(session, pending, due, ready_now)
    fresh = [key for key, members in groups.items() if key not in latest and any(rule.matches(s) for s in members)]
    stored_roots = _stored_roots(session, rule.user_id, [k for k in fresh if k not in rooted]) if not conversation \
        else set()
    for key in fresh:
        new.append(_job(rule, key, now, due, key in rooted or key in stored_roots))
    for key, job in latest.items():
        if late and job.state != JobState.PENDING and job.generation < MAX_GENERATION:
            new.append(_job(rule, key, now, due, True, job.generation + 1))
    return rows.add_jobs(session, new)


def _stored_roots(session: Session, user_id: str, trace_ids: list[str]) -> set[str]:
    if not trace_ids:
        return set()
    return set(session.scalars(select(OnlineSpan.trace_id).where(
        OnlineSpan.user_id == user_id, OnlineSpan.trace_id.in_(trace_ids), OnlineSpan.parent_span_id.is_(None))))
