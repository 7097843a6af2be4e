"""The door of request bodies, as ASGI middleware: what a route may be handed at all.

Before any route reads a body, ``BodyLimit`` answers ``{code, message}``:

- 413 for a body over the limit, whether or not the client declared its length: a declared
  length over it is refused before a byte of the body is read; a body sent without a length
  is counted as it arrives and cut at the limit, the 413 sent from here and the app handed a
  disconnect (so no route, multipart parser or not, can turn it into another answer);
- 415 for a compressed body (``Content-Encoding``: nothing here inflates, so no gzip bomb),
  but on the routes that inflate it themselves within their limit (``inflates``), and on
  JSON routes, for a ``Content-Type`` that is not JSON;
- 400 for a JSON body that is not strict JSON (``assay.core.strict_json``: NaN,
  1e400, lone surrogates, 1,024+ levels of nesting, a key given twice, bytes not UTF-8), with
  what is wrong and where. The framework's own parser would take most of these silently.
"""

from __future__ import annotations

from collections.abc import Callable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from assay._asgi_body import read_body, replay
from assay.core.messages import Phrase
from assay.core.strict_json import StrictJsonError, loads_strict
from assay.server.edge import DISCONNECT, Door
from assay.server.errors import send_error

TOO_LARGE = Phrase("api.body_too_large", "request body larger than {limit} bytes")
ENCODED = Phrase("api.body_encoded", "Content-Encoding {encoding} is not accepted: send the body uncompressed")
NOT_JSON = Phrase("api.body_not_json", "the body is not valid JSON: {problem}")
WRONG_TYPE = Phrase("api.body_type", "Content-Type {type} is not accepted here: send the body as application/json")
NO_TYPE = Phrase("api.body_no_type", "a body without a Content-Type is not accepted here: send the body as "
                                     "application/json")

_WITH_BODY = frozenset({"POST", "PUT", "PATCH", "DELETE"})


class BodyLimit:
    """Refuses bodies over ``limit_for(path)`` bytes, compressed bodies, and, where
    ``is_json(path)``, a non-empty body that is not strict JSON sent as ``application/json``.
    A JSON body is read whole (it is small) and replayed to the app; another body (an upload)
    streams through, counted when its length is not declared."""

    def __init__(self, app: ASGIApp, limit_for: Callable[[str], int],
                 is_json: Callable[[str], bool] = lambda _path: False,
                 inflates: Callable[[str], bool] = lambda _path: False) -> None:
        self.app = app
        self.limit_for = limit_for
        self.is_json = is_json
        self.inflates = inflates
        """Routes that inflate a compressed body themselves, bounded (``POST /v1/traces``)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] not in _WITH_BODY:
            await self.app(scope, receive, send)
            return
        path = scope["path"]
        limit = self.limit_for(path)
        headers = _headers(scope)
        encoding = headers.get(b"content-encoding", b"identity").strip().lower()
        if encoding not in (b"", b"identity") and not self.inflates(path):
            await _refuse(send, 415, ENCODED(encoding=repr(_text(encoding))))
            return
        declared = _content_length(headers)
        if declared is not None and declared > limit:
            await _refuse(send, 413, TOO_LARGE(limit=f"{limit:,}"))
            return
        json_route = self.is_json(path)
        content_type = headers.get(b"content-type", b"").strip()
        wrong_type = json_route and not _json_type(content_type)
        if wrong_type and declared:
            await _refuse_type(send, content_type)
            return
        if declared is not None and not json_route:
            # The HTTP server frames the body by its Content-Length (it never hands on more), so
            # a declared length within the limit needs no counting: the app reads the body itself.
            await self.app(scope, receive, send)
            return
        if not json_route:
            # An upload sent without a length streams through, counted as it arrives: holding it
            # here would hold all of it (up to the upload limit) in memory.
            door = Door(send)
            try:
                await self.app(scope, _counted(receive, limit, door), door.send)
            except Exception:
                if not door.answered:
                    raise
            return
        body = await read_body(receive, limit)
        if body is None:  # the client went away
            return
        if isinstance(body, int):
            await _refuse(send, 413, TOO_LARGE(limit=f"{limit:,}"))
            return
        if wrong_type and body:  # sent without a length
            await _refuse_type(send, content_type)
            return
        if json_route and body:
            try:
                loads_strict(body)
            except StrictJsonError as exc:
                await _refuse(send, 400, NOT_JSON(problem=str(exc)))
                return
        await self.app(scope, replay(body, receive), send)


def _counted(receive: Receive, limit: int, door: Door) -> Receive:
    """``receive`` that answers 413 through ``door`` once the body passes ``limit`` and from
    then on tells the app the client is gone."""
    size = 0

    async def counting() -> Message:
        nonlocal size
        if door.answered:
            return DISCONNECT
        message = await receive()
        size += len(message.get("body", b""))
        if size > limit:
            await door.refuse(413, TOO_LARGE(limit=f"{limit:,}"))
            return DISCONNECT
        return message

    return counting


def _headers(scope: Scope) -> dict[bytes, bytes]:
    return {name.lower(): value for name, value in scope.get("headers", ())}


def _content_length(headers: dict[bytes, bytes]) -> int | None:
    value = headers.get(b"content-length")
    if value is None or not value.strip().isdigit():
        return None
    return int(value)


def _json_type(value: bytes) -> bool:
    """``application/json`` or ``application/*+json``, parameters aside (as the framework reads
    JSON bodies: it takes no body without a Content-Type)."""
    media = value.split(b";", 1)[0].strip().lower()
    return media == b"application/json" or (media.startswith(b"application/") and media.endswith(b"+json"))


def _text(value: bytes, limit: int = 80) -> str:
    text = value.decode("latin-1")
    return text if len(text) <= limit else text[:limit] + "..."


async def _refuse_type(send: Send, content_type: bytes) -> None:
    await _refuse(send, 415, WRONG_TYPE(type=repr(_text(content_type))) if content_type else NO_TYPE())


async def _refuse(send: Send, status: int, message: str) -> None:
    await send_error(send, status, message, close=True)
