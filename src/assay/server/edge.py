"""The outermost ASGI layer of the service: what every request and every answer goes through.

- A request id: the client's ``X-Request-Id`` when it is a short token (a load balancer's),
  else a fresh one; it is answered in ``X-Request-Id``, in every error body (``requestId``)
  and on every log line written while the request is served (``server.logs.REQUEST_ID``).
- Headers on every answer: ``X-Content-Type-Options: nosniff`` and a content-security
  policy (the pages' own; the OpenAPI pages at ``/docs`` and ``/redoc`` load their scripts
  from a CDN and get a policy that allows just that; the manual at ``/docs/site`` runs a few
  inline scripts of its theme).
- A body that stops flowing: when the app waits longer than ``body_timeout_s`` for the next
  piece of a body, the client is answered 408 (the connection closed) and the app hears a
  disconnect, as it would from a client that went away.
- An exception no handler took: logged with its traceback under an error id and answered 500
  ``{code, message, requestId}`` here, so it carries the id and the headers like every answer.
- ``assay_http_requests_total{method, route, status}`` and
  ``assay_http_request_seconds{method, route}``, by route template (``/api/v1/runs/{run_id}``)
  so that ids never become labels.

The head of a request (its size, its header count, its time) is bounded before any of this,
in the HTTP protocol (``server.protocol``).
"""

from __future__ import annotations

import asyncio
import logging
import re
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from assay.core.messages import Phrase
from assay.server.docs_site import MANUAL_CSP, MANUAL_PATH
from assay.server.errors import last_resort, send_error
from assay.server.logs import REQUEST_ID, new_request_id

if TYPE_CHECKING:
    from assay.service.metrics import Metrics

PAGES_CSP = ("default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
             "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
"""Everything from this server, scripts only from files (no inline script runs); inline styles
are allowed because the code editor (CodeMirror) writes its own."""
DOCS_CSP = ("default-src 'self'; script-src 'self' 'unsafe-inline' https://cdn.jsdelivr.net; "
            "style-src 'self' 'unsafe-inline' https://cdn.jsdelivr.net; "
            "img-src 'self' data: https://fastapi.tiangolo.com; "
            "connect-src 'self'; object-src 'none'; base-uri 'none'; frame-ancestors 'none'")
"""FastAPI's OpenAPI pages: Swagger UI and ReDoc from jsDelivr, started by an inline script."""
DOCS_PATHS = ("/docs", "/redoc")


def _policy(path: str) -> bytes:
    """The content-security policy of an answer to ``path``."""
    if path in DOCS_PATHS:
        return DOCS_CSP.encode()
    if path == MANUAL_PATH or path.startswith(MANUAL_PATH + "/"):
        return MANUAL_CSP.encode()
    return PAGES_CSP.encode()


SECURITY_HEADERS = ((b"x-content-type-options", b"nosniff"), (b"content-security-policy", PAGES_CSP.encode()))
"""The headers of every answer (the protocol's own refusals too)."""

BODY_STALLED = Phrase("api.body_timeout", "the request body stopped arriving for {seconds} s: send it again")

_CLIENT_ID = re.compile(rb"[A-Za-z0-9._:-]{1,64}")
log = logging.getLogger("assay.server.edge")


class Door:
    """The ``send`` of one request, which a guard in front of the app may answer first: once
    it has, whatever the app still sends is dropped."""

    def __init__(self, send: Send) -> None:
        self._send = send
        self.started = False
        self.answered = False

    async def send(self, message: Message) -> None:
        if self.answered:
            return
        if message["type"] == "http.response.start":
            self.started = True
        await self._send(message)

    async def refuse(self, status: int, message: str) -> bool:
        """Answer ``{code, message}`` with ``status`` and close, unless the app has begun its
        own answer; True when this answer went out."""
        if self.started or self.answered:
            return False
        self.answered = True
        await send_error(self._send, status, message, close=True)
        return True


DISCONNECT: Message = {"type": "http.disconnect"}


class Edge:
    """Request ids, security headers, the body timeout and HTTP metrics (see the module)."""

    def __init__(self, app: ASGIApp, *, body_timeout_s: float, metrics: Metrics | None = None,
                 route_of: Callable[[Scope], str] = lambda scope: scope["path"]) -> None:
        self.app = app
        self.body_timeout_s = body_timeout_s
        self.metrics = metrics
        self.route_of = route_of

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        request_id = _request_id(scope)
        token = REQUEST_ID.set(request_id)
        csp = _policy(scope["path"])
        status = 500

        async def send_with_headers(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                headers = list(message.get("headers", ()))
                present = {name.lower() for name, _ in headers}
                headers.append((b"x-request-id", request_id.encode()))
                if b"x-content-type-options" not in present:
                    headers.append((b"x-content-type-options", b"nosniff"))
                if b"content-security-policy" not in present:
                    headers.append((b"content-security-policy", csp))
                message = {**message, "headers": headers}
            await send(message)

        door = Door(send_with_headers)
        try:
            await self.app(scope, self._timed(receive, door), door.send)
        except Exception as exc:
            if door.answered:  # the app failed on the disconnect it was handed after the 408
                log.debug("the app stopped after a stalled body", exc_info=True)
            elif door.started:  # mid-answer: the server cuts the connection
                raise
            else:
                # Answered here rather than by the framework's last resort, which sits outside
                # this layer: the answer gets the request id, in its body and headers, like any error.
                status, reason, extra = last_resort(exc, f"{scope['method']} {scope['path']}")
                await send_error(send_with_headers, status, reason, extra=extra)
        finally:
            REQUEST_ID.reset(token)
            if self.metrics is not None:
                method = scope["method"] if scope["method"] in _METHODS else "OTHER"
                self.metrics.http_request(method, self.route_of(scope), status, time.perf_counter() - started)

    def _timed(self, receive: Receive, door: Door) -> Receive:
        """``receive`` with a time limit on each piece of the body (not on waiting for a
        disconnect once the body is whole: streaming answers listen for that)."""
        body_done = False
        timeout = self.body_timeout_s

        async def timed() -> Message:
            nonlocal body_done
            if door.answered:
                return DISCONNECT
            if body_done:
                return await receive()
            try:
                async with asyncio.timeout(timeout):
                    message = await receive()
            except TimeoutError:
                log.info("a request body stalled for %g s: answered 408", timeout)
                await door.refuse(408, BODY_STALLED(seconds=f"{timeout:g}"))
                if self.metrics is not None:
                    self.metrics.refused("body_timeout")
                return DISCONNECT
            if message["type"] != "http.request" or not message.get("more_body", False):
                body_done = True
            return message

        return timed


_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})


def _request_id(scope: Scope) -> str:
    for name, value in scope.get("headers", ()):
        if name == b"x-request-id" and _CLIENT_ID.fullmatch(value):
            return value.decode("ascii")
    return new_request_id()
