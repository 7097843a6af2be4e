"""Errors as the API reports them: ``{code, message}`` with the specification's codes
(503001 evaluator not found, 503002 evaluator execution failed) or the HTTP status, and a
message that names the field or the row. No traceback ever reaches a client.

A message the product writes is said by a phrase (``core.messages``); the answer then also
carries ``messageCode`` and ``messageArgs``, from which the pages say it in their language
(falling back to ``message``)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from http import HTTPStatus
from typing import Any, Literal, get_args

import orjson
from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import Response
from sqlalchemy.exc import DataError, IntegrityError
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.types import Send

from assay.core.errors import AssayError, SpecError, format_loc
from assay.core.messages import Phrase, Said, code_and_args, in_turn
from assay.core.problems import AT, field_problem
from assay.server.logs import REQUEST_ID
from assay.service.failures import public_failure
from assay.store.outage import is_outage

EVALUATOR_NOT_FOUND = 503001
"""The evaluator named in the path does not exist (HTTP 404)."""
EVALUATOR_EXECUTION_FAILED = 503002
"""The evaluator could not run at all: its sandbox or judge is unavailable (HTTP 503), or its
stored config no longer validates (HTTP 500). An evaluator's own error (a timeout, a runtime
error) is an answer of ``/test``, not this code."""

log = logging.getLogger("assay.server")

Row = Literal["evaluator", "run", "task", "dataset", "online rule", "trace"]
NOT_FOUND: dict[Row, Phrase] = {row: Phrase(f"api.not_found.{row.replace(' ', '_')}", f"{row} {{id}} not found")
                                for row in get_args(Row)}
AT_PARAMETER = Phrase("api.at_parameter", "{where} parameter {path}: {problem}")
MORE = Phrase("api.more", "and {count} more")
CONFLICT = Phrase("api.conflict", "conflict: a row this request needs was changed or removed meanwhile; "
                                  "nothing was stored, reload and try again")
NOT_NULL = Phrase("api.not_null", "{field}: may not be null (leave it out to keep the stored one)")
"""A partial update (PUT or PATCH) that sends null for a field which cannot be empty."""
UNSTORABLE = Phrase("api.unstorable", "a value does not fit the database (too long, or not storable); "
                                      "nothing was stored")
DATABASE_AWAY = Phrase("api.database_away", "the database cannot be reached now (restarting, or every connection "
                                           "busy): try again in a few seconds")
ROUTING = {404: Phrase("api.unknown_path", "Not Found: {path} is no path of this API"),
           405: Phrase("api.wrong_method", "Method Not Allowed: {path} does not take {method}")}
"""The framework's own answers for a request no route takes (its detail as HTTP words it)."""


class ApiError(AssayError):
    """An error to answer with: HTTP ``status``, body ``{code, message}`` (code defaults to the status)."""

    def __init__(self, status: int, message: str, code: int | None = None,
                 headers: dict[str, str] | None = None, blocking: list[dict[str, str]] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code if code is not None else status
        self.message = message
        self.headers = headers
        self.blocking = blocking


def blocked(status: int, message: str, kind: Row, rows: Sequence[tuple[str, str]]) -> ApiError:
    """A refusal because other rows stand in the way (the tasks using an evaluator): the body's
    ``blocking`` lists each as ``{kind, id, name}``, so a page can link to every one of them."""
    return ApiError(status, message, blocking=[{"kind": kind, "id": row_id, "name": name} for row_id, name in rows])


def shown(value: str, limit: int = 64) -> str:
    """A value from the request, quoted for a message, cut short when long (a caller may send
    kilobytes where an id belongs)."""
    return repr(value) if len(value) <= limit else repr(value[:limit]) + f"... ({len(value):,} characters)"


def evaluator_not_found(evaluator_id: str) -> ApiError:
    return ApiError(404, NOT_FOUND["evaluator"](id=shown(evaluator_id)), EVALUATOR_NOT_FOUND)


def not_found(what: Row, row_id: str) -> ApiError:
    return ApiError(404, NOT_FOUND[what](id=shown(row_id)))


def error_body(status: int, message: str, code: int | None = None, *, request_id: str | None = None,
               blocking: list[dict[str, str]] | None = None) -> bytes:
    """The bytes of every error answer: ``{"code": ..., "message": ...}`` (code defaults to the
    status), with ``messageCode`` and ``messageArgs`` when a phrase said the message, and
    ``requestId``: the request's id (``server.logs.REQUEST_ID`` unless given), as in its
    ``X-Request-Id`` header and its log lines; ``blocking``, the rows that stand in the way
    (``blocked``)."""
    body: dict[str, Any] = {"code": code if code is not None else status, "message": message}
    if blocking is not None:
        body["blocking"] = blocking
    phrase, args = code_and_args(message)
    if phrase is not None:
        body["messageCode"], body["messageArgs"] = phrase, args
    request_id = request_id or REQUEST_ID.get()
    if request_id is not None:
        body["requestId"] = request_id
    return orjson.dumps(body)


def error_response(status: int, message: str, code: int | None = None,
                   headers: dict[str, str] | None = None, blocking: list[dict[str, str]] | None = None) -> Response:
    """An error answer from a route or an exception handler."""
    return Response(error_body(status, message, code, blocking=blocking), status_code=status, headers=headers,
                    media_type="application/json")


async def send_error(send: Send, status: int, message: str, *, close: bool = False,
                     extra: dict[str, str] | None = None) -> None:
    """An error answer written straight to ASGI ``send``, for the guards in front of the app
    (``close``: the rest of the request was not read, so the connection cannot be reused;
    ``extra``: more headers, such as ``Retry-After``)."""
    body = error_body(status, message)  # a phrase's message keeps its code here too
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    headers += [(name.lower().encode(), value.encode()) for name, value in (extra or {}).items()]
    if close:
        headers.append((b"connection", b"close"))
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def validation_message(errors: Sequence[Any]) -> Said:
    """Pydantic/FastAPI errors as one line naming each field path (``config.timeout: ...``)."""
    parts = []
    for err in errors[:10]:
        loc = list(err.get("loc", ()))
        problem = field_problem(err)
        if loc and loc[0] in ("body", "query", "path", "header"):
            where = loc[0]
            path = format_loc(loc[1:]) or where
            parts.append(AT(path=path, problem=problem) if where == "body"
                         else AT_PARAMETER(where=where, path=path, problem=problem))
        else:
            parts.append(AT(path=format_loc(loc) or "body", problem=problem))
    if len(errors) > 10:
        parts.append(MORE(count=len(errors) - 10))
    return in_turn(parts)


def install(app: FastAPI) -> None:
    """Register the handlers that turn every failure into ``{code, message}``."""

    @app.exception_handler(ApiError)
    async def _api_error(_request: Request, exc: ApiError) -> Response:
        return error_response(exc.status, exc.message, exc.code, exc.headers, exc.blocking)

    @app.exception_handler(SpecError)
    async def _spec_error(_request: Request, exc: SpecError) -> Response:
        return error_response(422, exc.phrased())

    @app.exception_handler(RequestValidationError)
    async def _invalid(_request: Request, exc: RequestValidationError) -> Response:
        return error_response(422, validation_message(exc.errors()))

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> Response:
        message = exc.detail if isinstance(exc.detail, str) else "request failed"
        routing = ROUTING.get(exc.status_code)
        if routing is not None and message == HTTPStatus(exc.status_code).phrase:  # no route: not a route's words
            message = routing(path=shown(request.url.path), method=shown(request.method, 16)) \
                if exc.status_code == 405 else routing(path=shown(request.url.path))
        return error_response(exc.status_code, message, headers=getattr(exc, "headers", None))

    @app.exception_handler(IntegrityError)
    async def _conflict(request: Request, exc: IntegrityError) -> Response:
        # Two requests raced (an evaluator deleted while a task attaching it was created, say):
        # the database kept its rules and nothing was stored; the caller may look and retry.
        log.info("conflict on %s %s: %s", request.method, request.url.path, exc.orig)
        return error_response(409, CONFLICT())

    @app.exception_handler(DataError)
    async def _unstorable(request: Request, exc: DataError) -> Response:
        log.info("unstorable value on %s %s: %s", request.method, request.url.path, exc.orig)
        return error_response(422, UNSTORABLE())

    @app.exception_handler(Exception)
    async def _internal(request: Request, exc: Exception) -> Response:
        status, reason, headers = last_resort(exc, f"{request.method} {request.url.path}")
        return error_response(status, reason, headers=headers)


def last_resort(exc: Exception, what: str) -> tuple[int, str, dict[str, str]]:
    """The answer to an exception no handler took (``what``: the request): a database outage is
    an operator's moment (a restart, a full pool), not a bug, so 503 with when to retry; anything
    else a 500 whose cause is logged under an error id."""
    if is_outage(exc):
        log.warning("%s: the database is unreachable: %s", what, exc)
        return 503, DATABASE_AWAY(), {"Retry-After": "5"}
    reason, _error_id = public_failure(exc, log, what)
    return 500, reason, {}
