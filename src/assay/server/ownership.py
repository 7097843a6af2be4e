"""One rule for shared work, the same for the API and the pages: everyone signed in reads
everything and may run any task (the run is theirs); a row's creator and the admins change and
delete it. A refusal names the row and its owner by name, never by id."""

from __future__ import annotations

from sqlalchemy.orm import Session

from assay.core.messages import Phrase
from assay.server.auth import Principal
from assay.server.errors import ApiError
from assay.store import users

NOBODY = "—"
"""The owner shown for a row whose creator's account is gone."""


def owner_name(session: Session, owner_id: str | None) -> str | None:
    """The name of the user ``owner_id`` names, or None (presets; a deleted account)."""
    if owner_id is None:
        return None
    return users.names(session, [owner_id]).get(owner_id)


def check_may_change(session: Session, user: Principal, owner_id: str | None, refusal: Phrase, name: str) -> None:
    """Nothing when ``user`` may change the row; else the 403 ``refusal`` naming it and its owner."""
    if not user.may_change(owner_id):
        raise ApiError(403, refusal(name=repr(name), owner=owner_name(session, owner_id) or NOBODY))
