"""``/api/v1/users``: users, their roles and their tokens. Admins list and create users, set
roles, and issue tokens to anyone; a plain user sees themself (``/users/me``) and lists and
issues their own tokens (revoking is ``DELETE /api/v1/tokens/{id}``). A token is shown once,
in the answer that issues it."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from starlette.concurrency import run_in_threadpool

from assay.core.errors import AssayError
from assay.core.messages import Phrase
from assay.server.auth import Principal
from assay.server.deps import CurrentUser, ServiceDep, SessionDep
from assay.server.errors import ApiError, shown
from assay.server.routes.tokens import token_out
from assay.server.schemas.common import ERROR_RESPONSES, Envelope, iso
from assay.server.schemas.tokens import TokenOut
from assay.server.schemas.users import TokenCreate, TokenIssued, UserCreate, UserOut, UserUpdate
from assay.server.service import Service
from assay.store import users
from assay.store.models import User

router = APIRouter(prefix="/users", tags=["users"], responses=ERROR_RESPONSES)

ADMINS_ONLY = Phrase("api.users.admins_only", "only an admin lists, creates or changes users")
OTHERS_TOKENS = Phrase("api.users.others_tokens", "only an admin manages another user's tokens")
USER_NOT_FOUND = Phrase("api.not_found.user", "user {id} not found")
BLANK_NAME = Phrase("api.users.blank_name", "name: must have a character other than spaces")
NAME_TAKEN = Phrase("api.users.name_taken", "name: a user called {name} exists already")
DEACTIVATED = Phrase("api.users.deactivated", "user {name} is deactivated: an admin activates them first")
ONESELF = Phrase("api.users.oneself", "you cannot deactivate yourself: another admin can")
LAST_ADMIN = Phrase("api.users.last_admin", "{name} is the last admin: make another user an admin first")


def user_out(user: User, live_tokens: int | None = None) -> UserOut:
    return UserOut(id=user.id, name=user.name, is_admin=user.is_admin, live_tokens=live_tokens,
                   created_at=iso(user.created_at), active=user.deactivated_at is None,
                   deactivated_at=iso(user.deactivated_at))


def _admin(user: Principal) -> None:
    if not user.is_admin:
        raise ApiError(403, ADMINS_ONLY())


def _found(session: Any, user_id: str) -> User:
    found = users.user_by_id(session, user_id)
    if found is None:
        raise ApiError(404, USER_NOT_FOUND(id=shown(user_id)))
    return found


def _tokens_of(session: Any, user_id: str, caller: Principal) -> User:
    """The user whose tokens ``caller`` may manage: themself, or anyone for an admin."""
    if user_id not in ("me", caller.id) and not caller.is_admin:
        raise ApiError(403, OTHERS_TOKENS())
    return _found(session, caller.id if user_id == "me" else user_id)


@router.get("", response_model=Envelope[list[UserOut]], summary="List users (admins)")
def list_users(session: SessionDep, user: CurrentUser) -> Any:
    _admin(user)
    return Envelope(data=[user_out(u, live) for u, live in users.list_users(session)])


@router.post("", response_model=Envelope[UserOut], summary="Create a user (admins)")
def create_user(body: UserCreate, session: SessionDep, user: CurrentUser) -> Any:
    _admin(user)
    name = body.name.strip()
    if not name:
        raise ApiError(422, BLANK_NAME())
    if users.get_user(session, name) is not None:
        raise ApiError(409, NAME_TAKEN(name=repr(name)))
    made = users.create_user(session, name, is_admin=body.is_admin)
    session.commit()
    return Envelope(data=user_out(made, 0))


@router.get("/me", response_model=Envelope[UserOut], summary="Who the token belongs to")
def me(session: SessionDep, user: CurrentUser) -> Any:
    return Envelope(data=user_out(_found(session, user.id)))


@router.patch("/{user_id}", response_model=Envelope[UserOut], summary="Set a user's role (admins)")
async def update_user(user_id: str, body: UserUpdate, service: ServiceDep, user: CurrentUser) -> Any:
    _admin(user)
    out = await run_in_threadpool(_set_role, service, user_id, body.is_admin)
    await run_in_threadpool(service.tokens.revoked)  # this server forgets the old role at once
    return Envelope(data=out)


def _set_role(service: Service, user_id: str, is_admin: bool) -> UserOut:
    with service.database.session() as session:
        found = _found(session, user_id)
        try:
            users.set_admin(session, found, is_admin)
        except AssayError:
            raise ApiError(409, LAST_ADMIN(name=repr(found.name))) from None
        session.commit()
        return user_out(found)


@router.post("/{user_id}/deactivate", response_model=Envelope[UserOut],
             summary="Deactivate a user (admins): tokens revoked, no sign-in; their rows stay readable")
async def deactivate_user(user_id: str, service: ServiceDep, user: CurrentUser) -> Any:
    _admin(user)
    if user_id == user.id:
        raise ApiError(409, ONESELF())
    out = await run_in_threadpool(_deactivate, service, user_id)
    await run_in_threadpool(service.tokens.revoked)  # this server forgets their tokens at once
    return Envelope(data=out)


def _deactivate(service: Service, user_id: str) -> UserOut:
    with service.database.session() as session:
        found = _found(session, user_id)
        try:
            users.deactivate(session, found)
        except AssayError:
            raise ApiError(409, LAST_ADMIN(name=repr(found.name))) from None
        session.commit()
        return user_out(found, 0)


@router.post("/{user_id}/activate", response_model=Envelope[UserOut],
             summary="Activate a deactivated user again (admins): issue them a token to sign in")
def activate_user(user_id: str, session: SessionDep, user: CurrentUser) -> Any:
    _admin(user)
    found = _found(session, user_id)
    users.activate(session, found)
    session.commit()
    return Envelope(data=user_out(found, 0))


@router.get("/{user_id}/tokens", response_model=Envelope[list[TokenOut]],
            summary="List a user's tokens (yours, or anyone's for an admin; `me` for yours)")
def list_tokens(user_id: str, session: SessionDep, user: CurrentUser) -> Any:
    owner = _tokens_of(session, user_id, user)
    return Envelope(data=[token_out(token, name) for token, name in users.list_tokens(session, owner.name)])


@router.post("/{user_id}/tokens", response_model=Envelope[TokenIssued],
             summary="Issue a token (to yourself, or to anyone for an admin): shown once")
def issue_token(user_id: str, body: TokenCreate, session: SessionDep, user: CurrentUser) -> Any:
    owner = _tokens_of(session, user_id, user)
    if owner.deactivated_at is not None:
        raise ApiError(409, DEACTIVATED(name=repr(owner.name)))
    issued = users.create_token(session, owner.name, body.label)
    session.commit()
    return Envelope(data=TokenIssued(id=issued.id, user=issued.user_name, label=body.label, token=issued.secret))
