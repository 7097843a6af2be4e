"""Rows of online evaluation: spans stored idempotently, rules, jobs (graded through the run
queue: ``store.online_queue``), and results inserted "ignore if present"."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from assay.store.db import dialect_insert
from assay.store.models import utcnow
from assay.store.online_models import JobState, OnlineJob, OnlineResult, OnlineRule, OnlineSpan

_CHUNK = 500


def trace_spans(session: Session, user_id: str, trace_id: str, limit: int) -> list[OnlineSpan]:
    return list(session.scalars(select(OnlineSpan).where(OnlineSpan.user_id == user_id,
                                                         OnlineSpan.trace_id == trace_id)
                                .order_by(OnlineSpan.start_ns).limit(limit)))


def conversation_spans(session: Session, user_id: str, conversation_id: str, limit: int) -> list[OnlineSpan]:
    """The spans of every trace that has a span of the conversation."""
    traces = select(OnlineSpan.trace_id).where(OnlineSpan.user_id == user_id,
                                               OnlineSpan.conversation_id == conversation_id).distinct()
    return list(session.scalars(select(OnlineSpan).where(OnlineSpan.user_id == user_id,
                                                         OnlineSpan.trace_id.in_(traces))
                                .order_by(OnlineSpan.start_ns).limit(limit)))


def recent_spans(session: Session, user_id: str, limit: int) -> list[OnlineSpan]:
    """The user's spans that started last, newest first."""
    return list(session.scalars(select(OnlineSpan).where(OnlineSpan.user_id == user_id)
                                .order_by(OnlineSpan.start_ns.desc()).limit(limit)))


def spans_by_ids(session: Session, keys: Sequence[tuple[str, str, str]]) -> dict[tuple[str, str, str], OnlineSpan]:
    """The spans of ``(user id, trace id, span id)`` keys that are stored, by key."""
    found: dict[tuple[str, str, str], OnlineSpan] = {}
    wanted = set(keys)
    for first in range(0, len(keys), _CHUNK):
        part = keys[first:first + _CHUNK]
        for span in session.scalars(select(OnlineSpan).where(
                OnlineSpan.user_id.in_({k[0] for k in part}), OnlineSpan.trace_id.in_({k[1] for k in part}),
                OnlineSpan.span_id.in_({k[2] for k in part}))):
            key = (span.user_id, span.trace_id, span.span_id)
            if key in wanted:
                found[key] = span
    return found


def spans_between(session: Session, user_id: str, start_ns: int, stop_ns: int, after_id: int,
                  limit: int) -> list[OnlineSpan]:
    """A page of the user's spans that started in [start_ns, stop_ns), by id after ``after_id``."""
    return list(session.scalars(select(OnlineSpan).where(
        OnlineSpan.user_id == user_id, OnlineSpan.start_ns >= start_ns, OnlineSpan.start_ns < stop_ns,
        OnlineSpan.id > after_id).order_by(OnlineSpan.id).limit(limit)))


def enabled_rules(session: Session, user_id: str) -> list[OnlineRule]:
    return list(session.scalars(select(OnlineRule).where(OnlineRule.user_id == user_id,
                                                         OnlineRule.enabled.is_(True))))


def rules_changed_at(session: Session) -> tuple[int, datetime | None]:
    """How many rules there are and when one last changed: a cache of them is stale when this moves."""
    count, latest = session.execute(select(func.count(), func.max(OnlineRule.updated_at))).one()
    return int(count or 0), latest


def jobs_of(session: Session, rule_ids: Iterable[str], targets: Iterable[str]) -> list[OnlineJob]:
    rule_ids, targets = list(rule_ids), list(targets)
    if not rule_ids or not targets:
        return []
    found: list[OnlineJob] = []
    for first in range(0, len(targets), _CHUNK):
        found += session.scalars(select(OnlineJob).where(OnlineJob.rule_id.in_(rule_ids),
                                                         OnlineJob.target.in_(targets[first:first + _CHUNK])))
    return found


def add_jobs(session: Session, jobs: Sequence[dict[str, Any]]) -> int:
    """Insert jobs, ignoring those already there (by rule, target, generation); returns how many were new."""
    if not jobs:
        return 0
    statement = (dialect_insert(session, OnlineJob.__table__)
                 .on_conflict_do_nothing(index_elements=["rule_id", "target", "generation"])
                 .returning(OnlineJob.id))
    return len(session.connection().execute(statement, list(jobs)).all())


def push_back(session: Session, job_ids: Sequence[int], due_at: datetime, ready: bool) -> None:
    """Spans arrived for these pending jobs: wait a quiet window more (and mark them ready when
    the root span came)."""
    if not job_ids:
        return
    values: dict[str, Any] = {"due_at": due_at}
    if ready:
        values["ready"] = True
    session.execute(update(OnlineJob).where(OnlineJob.id.in_(list(job_ids)), OnlineJob.state == JobState.PENDING)
                    .values(**values).execution_options(synchronize_session=False))


def backlog(session: Session) -> int:
    """Jobs not graded yet, on every server of the database."""
    # IN over the two open states, not "!= done": the (state, due_at) index answers it without
    # reading the done jobs, which are nearly all of them.
    return session.scalar(select(func.count()).where(OnlineJob.state.in_((JobState.PENDING.value,
                                                                          JobState.LEASED.value)))) or 0


def insert_results(session: Session, rows: Sequence[dict[str, Any]]) -> None:
    if rows:
        session.connection().execute(dialect_insert(session, OnlineResult.__table__).on_conflict_do_nothing(
            index_elements=["rule_id", "target", "generation", "evaluator_id", "evaluator_version"]), list(rows))


def judge_calls_since(session: Session, rule_id: str, since: datetime) -> int:
    """Results of the rule graded by a judge since ``since`` (its daily budget counts these)."""
    return session.scalar(select(func.count()).where(OnlineResult.rule_id == rule_id, OnlineResult.kind == "llm",
                                                     OnlineResult.status != "not_applicable",
                                                     OnlineResult.error_code.is_distinct_from("budget"),
                                                     OnlineResult.graded_at >= since)) or 0


def start_of_day(now: datetime | None = None) -> datetime:
    now = now or utcnow()
    return now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
