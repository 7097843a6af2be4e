"""One page of a list: search by words in some columns, sort by a named column, count, cut.

The API's lists (evaluators, tasks, runs) share it so that searching, sorting and paging
behave the same everywhere; each names its own searchable and sortable columns.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from sqlalchemy import ColumnElement, Select, func, or_, select
from sqlalchemy.orm import InstrumentedAttribute, Session

from assay.store.clean import storable

T = TypeVar("T")
Order = Literal["asc", "desc"]


@dataclass(frozen=True)
class Window:
    """What the caller asked for: words to find, a sort key and direction, and a slice
    (``limit`` None: everything from ``offset``)."""

    q: str | None = None
    sort: str | None = None
    order: Order = "desc"
    limit: int | None = None
    offset: int = 0


def _like(text: str) -> str:
    """``%text%`` with LIKE's own wildcards taken literally."""
    return "%" + text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def search(query: Select[T], words: str | None,
           columns: Sequence[InstrumentedAttribute[Any]]) -> Select[T]:
    """Rows where every word appears (any case) in one of ``columns``."""
    for word in storable(words or "").split()[:10]:  # compared as stored: a NUL is kept as U+FFFD
        pattern = _like(word.lower())
        query = query.where(or_(*(func.lower(c).like(pattern, escape="\\") for c in columns)))
    return query


def page(session: Session, query: Select[T], window: Window,
         sortable: Mapping[str, InstrumentedAttribute[Any] | ColumnElement[Any]],
         tie: InstrumentedAttribute[Any]) -> tuple[list[T], int]:
    """The rows of ``window`` and how many there are in all. ``window.sort`` must be a key of
    ``sortable`` (the route checks); ``tie`` keeps the order stable between pages."""
    total = session.scalar(select(func.count()).select_from(query.order_by(None).subquery())) or 0
    if window.sort is not None:
        column = sortable[window.sort]
        direction = column.desc() if window.order == "desc" else column.asc()
        query = query.order_by(None).order_by(direction, tie.desc() if window.order == "desc" else tie.asc())
    query = query.offset(window.offset)
    if window.limit is not None:
        query = query.limit(window.limit)
    return list(session.scalars(query)), total
