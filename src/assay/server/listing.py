"""The query parameters every list route takes (``q``, ``sort``, ``order``, ``limit``,
``offset``) and how the total travels back: in the ``X-Total-Count`` header, so that ``data``
stays the list the specification defines. Without ``limit`` a list is whole, as before."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated

from fastapi import Depends, Query, Response
from sqlalchemy.orm import Session

from assay.core.messages import Phrase
from assay.server.auth import Principal
from assay.server.errors import ApiError, shown
from assay.store import users
from assay.store.clean import storable
from assay.store.listing import Order, Window

TOTAL_HEADER = "X-Total-Count"
MAX_LIMIT = 500
LARGEST_ID = 2**63 - 1
"""A row id or key past every database's integer is no cursor (the drivers would refuse to send it)."""

BAD_SORT = Phrase("api.list.sort", "query parameter sort: {sort} is not one of {keys}")
NO_OWNER = Phrase("api.list.owner", "query parameter owner: no user named {owner}")


def _window(q: Annotated[str | None, Query(max_length=200, description="Words to find in names and "
                                                                      "descriptions (every word, any case).")] = None,
            sort: Annotated[str | None, Query(max_length=40, description="The column to sort by.")] = None,
            order: Annotated[Order, Query(description="asc or desc.")] = "desc",
            limit: Annotated[int | None, Query(ge=1, le=MAX_LIMIT, description="Page size (all when left out).")]
            = None,
            offset: Annotated[int, Query(ge=0, le=10_000_000)] = 0) -> Window:
    return Window(q=q.strip() or None if q else None, sort=sort, order=order, limit=limit, offset=offset)


WindowDep = Annotated[Window, Depends(_window)]

OwnerQuery = Annotated[str | None, Query(max_length=200, description="Only those this user created (me: yours).")]
"""The ``owner`` query parameter of every list route; ``owner_of`` turns it into a user id."""


def checked(window: Window, sortable: Iterable[str]) -> Window:
    """``window``, once its sort key is one of ``sortable`` (or none: the list's own order); an
    unknown key is a 422 naming the known ones."""
    keys = list(sortable)
    if window.sort is not None and window.sort not in keys:
        raise ApiError(422, BAD_SORT(sort=repr(window.sort), keys=", ".join(keys)))
    return window


def owner_of(session: Session, user: Principal, owner: str | None) -> str | None:
    """The user id an ``owner`` query parameter names (``me``: the caller); None for none given."""
    if owner is None:
        return None
    found = user.id if owner == "me" else users.user_id(session, storable(owner))
    if found is None:
        raise ApiError(422, NO_OWNER(owner=shown(owner)))
    return found


def tell_total(response: Response, total: int) -> None:
    response.headers[TOTAL_HEADER] = str(total)
