"""The service's door: the bearer secret and the body's size and kind, checked before anything
is parsed.

A plain ASGI middleware (no per-request task or body copy as with Starlette's
``BaseHTTPMiddleware``): a request without the right secret gets 401 before its body is read;
a body over the limit gets 413 as soon as its length is known; a compressed body (nothing here
inflates one: no gzip bomb) or one that says it is not JSON gets 415. The secret is compared
in constant time (``hmac.compare_digest``) and appears in no message or log line; the scheme
word ``Bearer`` may come in any case, as HTTP allows.
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from typing import Any

import orjson

from assay._asgi_body import read_body, replay

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

OPEN_PATHS = frozenset({"/health"})
"""Paths anyone may ask (a load balancer's probe): they run nothing."""


async def send_json(send: Send, status: int, body: dict[str, Any], headers: Sequence[tuple[bytes, bytes]] = ()) -> None:
    """Answer with ``body`` as JSON, from outside any framework."""
    content = orjson.dumps(body)
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(content)).encode()),
                            *headers]})
    await send({"type": "http.response.body", "body": content})


class Guard:
    """Wraps ``app``: 401 without ``Authorization: Bearer <secret>`` (no secret: every caller is
    let in, the ``--insecure-no-secret`` mode), 413 for a body over ``max_body`` bytes."""

    def __init__(self, app: ASGIApp, *, secret: str | None, max_body: int) -> None:
        self.app = app
        self.max_body = max_body
        self._expected = secret.encode() if secret else None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] in OPEN_PATHS:
            await self.app(scope, receive, send)
            return
        headers = {name.lower(): value for name, value in scope["headers"]}
        if self._expected is not None and not self._admitted(headers.get(b"authorization", b"")):
            await send_json(send, 401, {"success": False, "error": "unauthorized: send Authorization: Bearer "
                                        "<SANDBOX_SECRET>", "errorCode": "unauthorized"},
                            [(b"www-authenticate", b"Bearer")])
            return
        problem = _unacceptable(headers)
        if problem is not None:
            await send_json(send, 415, {"success": False, "error": problem, "errorCode": "unsupported_media_type"})
            return
        length = headers.get(b"content-length")
        if length is not None and not length.strip().isdigit():
            await send_json(send, 400, {"success": False, "error": "Content-Length is not a number",
                                        "errorCode": "invalid_config"})
            return
        if length is not None and int(length) > self.max_body:
            await self._too_large(send)
            return
        body = await read_body(receive, self.max_body)
        if body is None:  # the client went away
            return
        if isinstance(body, int):
            await self._too_large(send)
            return
        await self.app(scope, replay(body, receive), send)

    def _admitted(self, authorization: bytes) -> bool:
        """``Bearer <secret>`` (the scheme in any case), compared in constant time."""
        assert self._expected is not None
        scheme, _, secret = authorization.partition(b" ")
        return scheme.lower() == b"bearer" and hmac.compare_digest(secret.strip(), self._expected)

    async def _too_large(self, send: Send) -> None:
        await send_json(send, 413, {"success": False, "error": f"the request body is larger than {self.max_body} "
                                    "bytes, this service's limit", "errorCode": "too_large"})


def _unacceptable(headers: dict[bytes, bytes]) -> str | None:
    """Why the body cannot be read as JSON, judging by its headers; None when it can."""
    encoding = headers.get(b"content-encoding", b"").strip().lower()
    if encoding not in (b"", b"identity"):
        return f"Content-Encoding {encoding.decode('latin-1')[:40]!r} is not accepted: send the body uncompressed"
    media = headers.get(b"content-type", b"").split(b";", 1)[0].strip().lower()
    if media and media != b"application/json" and not (media.startswith(b"application/") and media.endswith(b"+json")):
        return f"Content-Type {media.decode('latin-1')[:60]!r} is not accepted: send the body as application/json"
    return None
