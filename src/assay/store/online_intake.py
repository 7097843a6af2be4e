"""Rows of the span intake: spans stored idempotently in one statement, and the arrivals that
hand the new ones to the planner.

An export request costs the database one ``INSERT … ON CONFLICT DO NOTHING RETURNING id`` for
its spans and one row in ``online_arrivals`` for the ids that were new, whatever its size. On
PostgreSQL the batch goes as one JSON parameter read by ``json_to_recordset``: the statement's
text is the same for every batch, so the driver converts it once, and the batch is written by
orjson and read by the server, both in C. A multi-row ``VALUES`` of 512 spans has 7,000
placeholders, which the driver parsed again for every batch (most of the intake's time when
profiled); arrays per column (``unnest``) moved that time into the driver's escaping of each
element, in Python. On SQLite, SQLAlchemy's multi-row insert is kept.

Arrivals are claimed by deleting them (``DELETE … RETURNING``; ``SKIP LOCKED`` on PostgreSQL,
the single writer on SQLite): the planner's transaction that schedules their jobs is the one
that deletes them, so each new span meets the rules once, on whichever server.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

from sqlalchemy import Table, delete, func, select
from sqlalchemy.dialects import sqlite
from sqlalchemy.orm import Session

from assay.store.clean import escape, storable
from assay.store.db import json_dumps
from assay.store.models import utcnow
from assay.store.online_models import OnlineArrival, OnlineSpan

SPAN_COLUMNS = ("trace_id", "span_id", "parent_span_id", "name", "kind", "start_ns", "end_ns", "status_code",
                "status_message", "attributes", "events", "resource", "conversation_id")
"""What a ``SpanRecord`` gives a stored span (its owner and arrival time aside)."""
_CHUNK = 1000
"""Row ids per ``IN`` list."""
_PG_TYPES = ("text", "text", "text", "text", "int", "bigint", "bigint", "int", "text", "jsonb", "jsonb", "jsonb",
             "text")
_ESCAPED = frozenset({"name", "status_message", "attributes", "events", "resource"})
"""Columns whose NULs are escaped on PostgreSQL (``NulSafeText``, ``NulSafeJson``: ``store.clean``)."""
_PG_INSERT = (
    f"INSERT INTO online_spans (user_id, received_at, {', '.join(SPAN_COLUMNS)}) "
    f"SELECT %s, %s, {', '.join(SPAN_COLUMNS)} FROM json_to_recordset(%s::json) "
    f"AS r({', '.join(f'{c} {t}' for c, t in zip(SPAN_COLUMNS, _PG_TYPES, strict=True))}) "
    "ON CONFLICT (user_id, trace_id, span_id) DO NOTHING RETURNING id")

_SQLITE_INSERT = (
    f"INSERT INTO online_spans (user_id, received_at, {', '.join(SPAN_COLUMNS)}) "
    "SELECT ?, ?, " + ", ".join(f"json(value ->> '$.{c}')" if c in ("attributes", "events", "resource")
                                else f"value ->> '$.{c}'" for c in SPAN_COLUMNS)
    + " FROM json_each(?) WHERE true ON CONFLICT (user_id, trace_id, span_id) DO NOTHING RETURNING id")
"""``WHERE true``: SQLite reads an ``ON CONFLICT`` after a bare ``SELECT … FROM`` as a join's."""
_NUL_TEXT = ("name", "status_message", "conversation_id")
"""Text columns a span's sender writes (ids are hex; JSON columns keep a NUL escaped)."""


def insert_spans(session: Session, user_id: str, spans: Sequence[Any]) -> list[int]:
    """Store ``spans`` (``SpanRecord``-like) for ``user_id`` in one statement; a span already
    stored (or twice in the batch) is left as it is. Returns the row ids of the spans new now."""
    unique = list({(s.trace_id, s.span_id): s for s in spans}.values())
    if not unique:
        return []
    now = utcnow()
    if session.get_bind().dialect.name == "postgresql":
        return _insert_json(session, user_id, unique, now)
    plain: list[Any] = []
    texts: list[Any] = []
    for span in unique:
        (texts if any("\x00" in (getattr(span, c) or "") for c in _NUL_TEXT) else plain).append(span)
    return _insert_json_each(session, user_id, plain, now) + _insert_values(session, user_id, texts, now)


def _insert_values(session: Session, user_id: str, spans: list[Any], now: Any) -> list[int]:
    """SQLite, SQLAlchemy's multi-row insert: for spans with a NUL in a text column, which
    SQLite's JSON functions end there."""
    if not spans:
        return []
    statement = (sqlite.insert(cast(Table, OnlineSpan.__table__)).on_conflict_do_nothing(
        index_elements=["user_id", "trace_id", "span_id"]).returning(OnlineSpan.id))
    values = [{"user_id": user_id, "received_at": now, **{c: getattr(s, c) for c in SPAN_COLUMNS}} for s in spans]
    return [row_id for row_id, in session.connection().execute(statement, values)]


def _insert_json_each(session: Session, user_id: str, spans: list[Any], now: Any) -> list[int]:
    """SQLite: the batch as one JSON array read by ``json_each``, as on PostgreSQL: SQLAlchemy's
    multi-row insert processed each of the ~7,000 values in Python, twice the time of the
    statement itself. The time is written as the column's own type writes it."""
    if not spans:
        return []
    stamp = cast(Table, OnlineSpan.__table__).c.received_at.type.bind_processor(session.get_bind().dialect)
    records = json_dumps([{c: getattr(s, c) for c in SPAN_COLUMNS} for s in spans])
    raw: Any = session.connection().connection.driver_connection
    cursor = raw.execute(_SQLITE_INSERT, (user_id, stamp(now) if stamp else now, records))
    try:
        return [row_id for row_id, in cursor.fetchall()]
    finally:
        cursor.close()


def _insert_json(session: Session, user_id: str, spans: list[Any], now: Any) -> list[int]:
    """PostgreSQL: the batch as one JSON array of records. The driver's connection is used as it
    is: the columns' types are bypassed, so their NUL escaping is done here (``store.clean``)."""
    records = []
    for s in spans:
        record = {c: getattr(s, c) for c in SPAN_COLUMNS}
        for column in _ESCAPED:
            record[column] = escape(record[column])
        if record["conversation_id"] is not None:
            record["conversation_id"] = storable(record["conversation_id"])
        records.append(record)
    raw: Any = session.connection().connection.driver_connection
    with raw.cursor() as cursor:
        cursor.execute(_PG_INSERT, (user_id, now, json_dumps(records)))
        return [row_id for row_id, in cursor.fetchall()]


def add_arrival(session: Session, user_id: str, span_ids: list[int]) -> None:
    """Hand the spans of ``span_ids`` (just stored) to the planner."""
    if span_ids:
        session.add(OnlineArrival(user_id=user_id, span_ids=span_ids, spans=len(span_ids), created_at=utcnow()))


def claim_arrivals(session: Session, limit: int) -> list[tuple[str, list[int]]]:
    """Take up to ``limit`` arrivals, oldest first, deleting them in the caller's transaction:
    ``(user id, span row ids)`` each. Another server's planner skips those taken (PostgreSQL) or
    waits for this transaction (SQLite)."""
    oldest = select(OnlineArrival.id).order_by(OnlineArrival.id).limit(limit)
    if session.get_bind().dialect.name == "postgresql":
        oldest = oldest.with_for_update(skip_locked=True)
    taken = session.execute(delete(OnlineArrival).where(OnlineArrival.id.in_(oldest.scalar_subquery()))
                            .returning(OnlineArrival.user_id, OnlineArrival.span_ids))
    return [(user_id, list(ids)) for user_id, ids in taken]


def peek_arrivals(session: Session, limit: int) -> list[tuple[int, str, list[int]]]:
    """Up to ``limit`` arrivals, oldest first, left in place: ``(arrival id, user id, span row
    ids)`` each (SQLite's planner reads before it writes: ``delete_arrivals``)."""
    return [(arrival_id, user_id, list(ids)) for arrival_id, user_id, ids in session.execute(
        select(OnlineArrival.id, OnlineArrival.user_id, OnlineArrival.span_ids)
        .order_by(OnlineArrival.id).limit(limit))]


def delete_arrivals(session: Session, arrival_ids: list[int]) -> bool:
    """Delete the arrivals of ``arrival_ids`` in the caller's transaction; False, deleting
    nothing, when another planner took one of them first."""
    gone = session.execute(delete(OnlineArrival).where(OnlineArrival.id.in_(arrival_ids))
                           .returning(OnlineArrival.id)).all()
    if len(gone) == len(set(arrival_ids)):
        return True
    session.rollback()
    return False


def unplanned(session: Session) -> int:
    """Spans stored that no rule has looked at yet, on every server of the database."""
    return int(session.scalar(select(func.coalesce(func.sum(OnlineArrival.spans), 0))) or 0)


def sampling_keys(session: Session, row_ids: Sequence[int]) -> list[tuple[int, str, str | None]]:
    """``(row id, trace id, conversation id)`` of the spans of ``row_ids``: what sampling reads."""
    table = OnlineSpan.__table__.c
    return [(i, t, c) for first in range(0, len(row_ids), _CHUNK) for i, t, c in session.execute(
        select(table.id, table.trace_id, table.conversation_id).where(table.id.in_(row_ids[first:first + _CHUNK])))]


def spans_by_row_ids(session: Session, row_ids: Sequence[int]) -> list[OnlineSpan]:
    """The spans of ``row_ids``, in the order they were stored."""
    found: list[OnlineSpan] = []
    for first in range(0, len(row_ids), _CHUNK):
        found += session.scalars(select(OnlineSpan).where(OnlineSpan.id.in_(row_ids[first:first + _CHUNK])))
    return sorted(found, key=lambda span: span.id)
