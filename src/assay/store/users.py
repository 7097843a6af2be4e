"""Users and their API tokens.

A token is 32 random bytes (``assay_`` + URL-safe base64), shown once when created; the
database keeps only its SHA-256 (a fast hash suffices: the token has 256 bits of entropy, so
there is nothing to guess) and its first characters, to tell tokens apart in listings.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from assay.core.errors import AssayError
from assay.store.changes import bump
from assay.store.clean import storable
from assay.store.models import ApiToken, User, is_row_id, utcnow

TOKEN_PREFIX = "assay_"


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True, slots=True)
class NewToken:
    """A token just created: ``secret`` is the only copy of the token itself."""

    id: str
    user_name: str
    secret: str


def create_user(session: Session, name: str, *, is_admin: bool = False) -> User:
    """A new user; AssayError when the name is taken or empty."""
    name = storable(name.strip())
    if not name or len(name) > 200:
        raise AssayError("a user name must have 1 to 200 characters")
    if get_user(session, name) is not None:
        raise AssayError(f"user {name!r} exists already")
    user = User(name=name, is_admin=is_admin)
    session.add(user)
    session.flush()
    return user


def first_admin(session: Session, name: str = "admin") -> NewToken | None:
    """On a database with no users yet: an admin ``name`` and a token for them (the only way in
    for someone who has just started the server); None once any user exists."""
    if session.scalars(select(User.id).limit(1)).first() is not None:
        return None
    create_user(session, name, is_admin=True)
    return create_token(session, name, "created at first start")


def get_user(session: Session, name: str) -> User | None:
    return session.scalars(select(User).where(User.name == name)).first()


def user_id(session: Session, name: str) -> str | None:
    """The id of the user called ``name``, or None."""
    return session.scalar(select(User.id).where(User.name == name))


def names(session: Session, user_ids: Iterable[str]) -> dict[str, str]:
    """User id -> name, for the ids given that are users."""
    ids = sorted(set(user_ids))
    return {row.id: row.name for row in session.execute(select(User.id, User.name).where(User.id.in_(ids)))}


def create_token(session: Session, user_name: str, label: str = "") -> NewToken:
    """A new token for ``user_name``; AssayError when there is no such user."""
    user = get_user(session, user_name)
    if user is None:
        raise AssayError(f"no user {user_name!r}: create it first with `assay users create {user_name}`")
    if user.deactivated_at is not None:
        raise AssayError(f"user {user_name!r} is deactivated: an admin activates them first")
    secret = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken(user_id=user.id, name=storable(label), token_hash=hash_token(secret), prefix=secret[:12])
    session.add(token)
    session.flush()
    return NewToken(token.id, user.name, secret)


def revoke_token(session: Session, token_or_id: str) -> ApiToken:
    """Revoke a token named by its id or by the token itself; AssayError when none matches."""
    by_id = session.get(ApiToken, token_or_id) if is_row_id(token_or_id) else None
    token = by_id or session.scalars(
        select(ApiToken).where(ApiToken.token_hash == hash_token(token_or_id))).first()
    if token is None:
        raise AssayError("no such token: give the token's id (as `assay tokens create` printed it) or the token")
    if token.revoked_at is None:
        token.revoked_at = utcnow()
        # Committed with the revocation: every server of the database drops the answers it
        # keeps at its next poll of the counters (``assay.store.changes``).
        bump(session, "tokens")
    return token


def list_tokens(session: Session, user_name: str | None = None) -> list[tuple[ApiToken, str]]:
    """Tokens (with their user's name), oldest first; only ``user_name``'s when given."""
    query = select(ApiToken, User.name).join(User, User.id == ApiToken.user_id).order_by(ApiToken.created_at)
    if user_name is not None:
        query = query.where(User.name == user_name)
    return [(token, name) for token, name in session.execute(query).all()]


def user_for_token(session: Session, secret: str) -> User | None:
    """The active user a live (unrevoked) token belongs to, or None."""
    query = (select(User).join(ApiToken, ApiToken.user_id == User.id)
             .where(ApiToken.token_hash == hash_token(secret), ApiToken.revoked_at.is_(None),
                    User.deactivated_at.is_(None)))
    return session.scalars(query).first()


def list_users(session: Session) -> list[tuple[User, int]]:
    """Every user, by name, with how many live tokens each holds."""
    live = (select(ApiToken.user_id, func.count().label("live")).where(ApiToken.revoked_at.is_(None))
            .group_by(ApiToken.user_id).subquery())
    query = select(User, func.coalesce(live.c.live, 0)).outerjoin(live, live.c.user_id == User.id).order_by(User.name)
    return [(user, int(count)) for user, count in session.execute(query).all()]


def user_by_id(session: Session, user_id: str) -> User | None:
    """The user, or None (also for an id that is not a row id at all)."""
    return session.get(User, user_id) if is_row_id(user_id) else None


def set_admin(session: Session, user: User, is_admin: bool) -> None:
    """Give or take the admin role; AssayError when it would leave no admin. Counted as a
    ``tokens`` change: every server drops the principals it keeps, so the role applies at once."""
    if user.is_admin and not is_admin:
        _not_last_admin(session, user)
    user.is_admin = is_admin
    bump(session, "tokens")
    session.flush()


def _not_last_admin(session: Session, user: User) -> None:
    admins = session.scalar(select(func.count()).select_from(User).where(User.is_admin.is_(True),
                                                                        User.deactivated_at.is_(None)))
    if (admins or 0) <= 1:
        raise AssayError(f"{user.name!r} is the last admin: make another user an admin first")


def deactivate(session: Session, user: User) -> int:
    """Deactivate ``user``: every live token of theirs revoked now (their sessions end at every
    server's next poll of the counters), none issued until they are activated again; their
    evaluators, datasets, tasks and runs stay, readable by everyone and named as theirs.
    AssayError when they are the last active admin. Returns how many tokens were revoked."""
    if user.deactivated_at is not None:
        return 0
    if user.is_admin:
        _not_last_admin(session, user)
    now = utcnow()
    user.deactivated_at = now
    live = list(session.scalars(select(ApiToken).where(ApiToken.user_id == user.id, ApiToken.revoked_at.is_(None))))
    for token in live:
        token.revoked_at = now
    bump(session, "tokens")
    session.flush()
    return len(live)


def activate(session: Session, user: User) -> None:
    """Let a deactivated user be issued tokens again (their old ones stay revoked)."""
    user.deactivated_at = None
    session.flush()
