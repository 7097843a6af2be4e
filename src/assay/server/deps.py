"""Dependencies of the routes, as ``Annotated`` aliases: ``ServiceDep`` (the process's
``Service``), ``SessionDep`` (a database session), ``CurrentUser`` (the caller, from the
bearer token)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Annotated

from fastapi import Depends, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from sqlalchemy.orm import Session

from assay.core.messages import Phrase
from assay.server.auth import Principal
from assay.server.errors import ApiError
from assay.server.service import Service

_bearer = HTTPBearer(auto_error=False, description="An API token from `assay tokens create USER`.")


async def get_service(request: Request) -> Service:
    # async: FastAPI runs a plain ``def`` dependency in the threadpool, a hop per request
    return request.app.state.service


ServiceDep = Annotated[Service, Depends(get_service)]


def get_session(service: ServiceDep) -> Iterator[Session]:
    """A session for one request; routes that write commit it themselves."""
    with service.database.session() as session:
        yield session


SessionDep = Annotated[Session, Depends(get_session)]

NO_TOKEN = Phrase("api.no_token", "send Authorization: Bearer <token> (create one with `assay tokens create USER`)")
BAD_TOKEN = Phrase("api.bad_token", "the token is unknown or revoked")


async def current_user(service: ServiceDep,
                       credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]) -> Principal:
    """The caller named by ``Authorization: Bearer <token>``; 401 without a live token."""
    if credentials is None or credentials.scheme.lower() != "bearer" or not credentials.credentials:
        raise _unauthorized(NO_TOKEN())
    token = credentials.credentials
    known, principal = service.tokens.cached(token)
    if not known:
        principal = await service.tokens.fetch(token)
    if principal is None:
        raise _unauthorized(BAD_TOKEN())
    return principal


CurrentUser = Annotated[Principal, Depends(current_user)]


def _unauthorized(message: str) -> ApiError:
    return ApiError(401, message, headers={"WWW-Authenticate": "Bearer"})
