"""Rows of online evaluation: spans stored idempotently, rules, jobs (graded through the run
queue: ``store.online_queue``), and results inserted "ignore if present"."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, cast

from sqlalchemy import CursorResult, and_, case, delete, func, literal, select, type_coerce, update
from sqlalchemy.orm import Session

from assay.store.clean import NulSafeJson
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


SEARCHED = ("trace_id", "span_id", "parent_span_id", "name", "kind", "start_ns", "end_ns", "status_code",
            "attributes", "resource")
"""What a search of spans reads of each: what a filter may name, and what a trace's row and a
filter's preview show."""


def recent_span_rows(session: Session, user_id: str, limit: int) -> list[Any]:
    """The user's spans that started last, newest first, as plain rows of ``SEARCHED`` (the
    ORM's objects cost most of a search of thousands)."""
    table = OnlineSpan.__table__.c
    return list(session.execute(select(*(table[name] for name in SEARCHED)).where(table.user_id == user_id)
                                .order_by(table.start_ns.desc()).limit(limit)))


def verdict_counts(session: Session, user_id: str, trace_ids: Sequence[str]) -> list[tuple[str, str, int]]:
    """``(trace id, status, results)`` of the results the user's rules gave on ``trace_ids``."""
    mine = select(OnlineRule.id).where(OnlineRule.user_id == user_id)
    out: list[tuple[str, str, int]] = []
    for first in range(0, len(trace_ids), _CHUNK):
        out += [(trace_id, status, count) for trace_id, status, count in session.execute(
            select(OnlineResult.trace_id, OnlineResult.status, func.count())
            .where(OnlineResult.trace_id.in_(trace_ids[first:first + _CHUNK]), OnlineResult.rule_id.in_(mine))
            .group_by(OnlineResult.trace_id, OnlineResult.status))]
    return out


def result_sums(session: Session, rule: OnlineRule, start: datetime, stop: datetime, *, by: str | None = None,
                per_evaluator: bool = False, split: str | None = None) -> list[Any]:
    """The rule's results on spans that started in [start, stop), counted by the database per
    status and, as asked, per ``by`` (``hour`` or ``day``, UTC), per evaluator name and per value
    of the graded span's attribute ``split``. Rows of ``bucket`` (a UTC datetime, None without
    ``by``), ``evaluator``, ``value`` (the attribute's JSON value), ``status`` and their sums
    (``ResultSums``): a summary over millions of results reads a row per group, not per result."""
    result, postgres = OnlineResult.__table__.c, session.get_bind().dialect.name == "postgresql"
    keys: list[Any] = [_bucket(result.at, by, postgres).label("bucket") if by else literal(None).label("bucket"),
                       (result.evaluator_name if per_evaluator else literal(None)).label("evaluator")]
    span = OnlineSpan.__table__.c
    if split is not None:  # PostgreSQL reads the key as a parameter; SQLite as a quoted path label
        key = literal(split) if postgres else literal('$."' + split + '"')
        keys.append(type_coerce(span.attributes.op("->")(key), NulSafeJson()).label("value"))
    else:
        keys.append(literal(None).label("value"))
    query = select(*keys, result.status, func.count().label("n"),
                   func.sum(case((result.passed.is_(True), 1), else_=0)).label("passed"),
                   func.count(result.score).label("scored"), func.sum(result.score).label("score_sum"),
                   func.sum(result.score * result.score).label("score_squares"))
    if split is not None:
        query = query.select_from(OnlineResult.__table__.outerjoin(OnlineSpan.__table__, and_(
            span.user_id == rule.user_id, span.trace_id == result.trace_id, span.span_id == result.span_id)))
    query = query.where(result.rule_id == rule.id, result.at >= start, result.at < stop)
    grouped = [k for k, wanted in zip(keys, (by, per_evaluator, split is not None), strict=True) if wanted]
    return [ResultSums(_bucket_start(bucket, postgres) if by else None, *sums)
            for bucket, *sums in session.execute(query.group_by(*grouped, result.status))]


@dataclass(frozen=True, slots=True)
class ResultSums:
    """Results of one status in one group (``result_sums``)."""

    bucket: datetime | None
    evaluator: str | None
    value: Any
    status: str
    n: int
    passed: int | None
    scored: int
    score_sum: float | None
    score_squares: float | None


def _bucket(at: Any, by: str, postgres: bool) -> Any:
    if postgres:
        return func.date_trunc(by, func.timezone("UTC", at))
    return func.substr(at, 1, 13 if by == "hour" else 10)  # "YYYY-MM-DD HH" or "YYYY-MM-DD"


def _bucket_start(start: Any, postgres: bool) -> datetime:
    """A bucket's start as a UTC datetime: PostgreSQL's timestamp, SQLite's text of it."""
    if postgres:
        return cast(datetime, start).replace(tzinfo=UTC)
    return datetime.fromisoformat(start + (":00" if len(start) == 13 else "")).replace(tzinfo=UTC)


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


def enabled_rule_ids(session: Session, rule_ids: Iterable[str]) -> set[str]:
    """Those of ``rule_ids`` whose rules exist and are enabled."""
    wanted = list(rule_ids)
    return set(session.scalars(select(OnlineRule.id).where(OnlineRule.id.in_(wanted), OnlineRule.enabled.is_(True)))) \
        if wanted else set()


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


def drop_pending_jobs(session: Session, rule_id: str) -> int:
    """Delete the rule's jobs no slice has taken; returns how many."""
    gone = cast(CursorResult[Any], session.execute(
        delete(OnlineJob).where(OnlineJob.rule_id == rule_id, OnlineJob.state == JobState.PENDING.value)
        .execution_options(synchronize_session=False)))
    return int(gone.rowcount or 0)


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
