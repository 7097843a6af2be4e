"""Refusals on ``POST /v1/traces`` as OTLP/HTTP asks, as ASGI middleware: every answer that is
not a success carries a ``google.rpc.Status`` (``code``, ``message``) in the request's encoding,
protobuf or JSON, whoever refused: the route (400, 413 inflated, 415, 429), the token check
(401, 403), the body door (413), the database door (503), the body timeout, an unexpected 500.

They all answer the API's ``{code, message}`` as anywhere else; here that answer is rewritten
on its way out: its message kept, its code the gRPC code of its HTTP status, its other headers
(``Retry-After``, ``WWW-Authenticate``, ``X-Request-Id``) as they were. Added outermost, so the
request id and the security headers are on it already. Other paths pass untouched.
"""

from __future__ import annotations

import json
from http import HTTPStatus

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from assay.service.online.otlp import JSON, PROTOBUF, media_type, status_body

GRPC_CODES = {400: 3, 401: 16, 403: 7, 404: 5, 405: 12, 408: 4, 413: 8, 415: 3, 429: 8, 500: 13, 503: 14}
"""HTTP status: gRPC code (INVALID_ARGUMENT 3, UNAUTHENTICATED 16, PERMISSION_DENIED 7, NOT_FOUND 5,
UNIMPLEMENTED 12, DEADLINE_EXCEEDED 4, RESOURCE_EXHAUSTED 8, INTERNAL 13, UNAVAILABLE 14); UNKNOWN (2)
for any other."""
UNKNOWN = 2
MAX_ERROR_BYTES = 64 << 10
"""An error answer is read at most this far (the API's are a few hundred bytes)."""
_REPLACED = frozenset({b"content-type", b"content-length"})


class OtlpStatus:
    def __init__(self, app: ASGIApp, path: str) -> None:
        self.app = app
        self.path = path

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] != self.path:
            await self.app(scope, receive, send)
            return
        kind = PROTOBUF if media_type(_header(scope, b"content-type")) == PROTOBUF else JSON
        held: Message | None = None
        body = bytearray()

        async def rewrite(message: Message) -> None:
            nonlocal held
            if message["type"] == "http.response.start" and message["status"] >= 400:
                held = message
                return
            if held is None or message["type"] != "http.response.body":
                await send(message)
                return
            body.extend(message.get("body", b"")[:MAX_ERROR_BYTES - len(body)])
            if message.get("more_body", False):
                return
            status = held["status"]
            out = status_body(GRPC_CODES.get(status, UNKNOWN), _message(bytes(body), status), kind)
            headers = [(k, v) for k, v in held.get("headers", ()) if k.lower() not in _REPLACED]
            headers += [(b"content-type", kind.encode()), (b"content-length", str(len(out)).encode())]
            await send({**held, "headers": headers})
            await send({"type": "http.response.body", "body": out})

        await self.app(scope, receive, rewrite)


def _message(body: bytes, status: int) -> str:
    """The API error's message, or the status's phrase for a body that is not one."""
    try:
        document = json.loads(body)
    except ValueError:
        document = None
    if isinstance(document, dict) and isinstance(document.get("message"), str):
        return str(document["message"])
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return f"HTTP {status}"


def _header(scope: Scope, name: bytes) -> str:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return bytes(value).decode("latin-1")
    return ""
