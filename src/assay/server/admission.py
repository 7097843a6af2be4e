"""The door of the database, as ASGI middleware: as many requests at once as the requests' pool
has connections, a bounded queue behind them, and a clear refusal beyond.

SQLAlchemy's pool alone makes a crowd wait on threads for a connection, then fails the late ones
with a 500 (``QueuePool limit ... reached``), and the threads it holds delay everything else. Here,
a request that would use the database (all but those ``exempt`` says do not) takes one of
``limit`` places before the app sees it; when none is free it waits in line, in order, without a
thread. A line already ``queue`` long, or a wait longer than ``wait_s``, is answered 503 with
``Retry-After`` and ``{code, message}`` saying so: every request gets an answer, and a crowd costs
the server memory for its line, never its threads or the runs in progress (grading has a pool of
its own, ``server.service``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from starlette.types import ASGIApp, Receive, Scope, Send

from assay.core.messages import Phrase
from assay.server.errors import error_body
from assay.service.metrics import Metrics

BUSY = Phrase("api.busy", "the server is busy: {why}; try again in {seconds} s")
LINE_FULL = Phrase("api.busy.line_full", "{waiting} requests are already waiting for the database")
WAITED = Phrase("api.busy.waited", "no database connection came free within {ms} ms")
RETRY_AFTER_S = 1


class DatabaseAdmission:
    """At most ``limit`` requests in the app at once (those ``exempt(path)`` aside), ``queue``
    more waiting at most ``wait_s`` each, the rest refused with 503 and ``Retry-After``."""

    def __init__(self, app: ASGIApp, *, limit: int, queue: int, wait_s: float,
                 exempt: Callable[[str], bool] = lambda _path: False, metrics: Metrics | None = None) -> None:
        self.app = app
        self.metrics = metrics
        self.limit = limit
        self.queue = queue
        self.wait_s = wait_s
        self.exempt = exempt
        self._places = asyncio.Semaphore(limit)
        self.waiting = 0
        """Requests in line now."""
        self.refused = 0
        """Requests refused since the start (line full, or waited too long)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self.exempt(scope["path"]):
            await self.app(scope, receive, send)
            return
        if self._places.locked():
            if self.waiting >= self.queue:
                await self._refuse(send, LINE_FULL(waiting=f"{self.waiting:,}"))
                return
            self._line(+1)
            try:
                await asyncio.wait_for(self._places.acquire(), self.wait_s)
            except TimeoutError:
                await self._refuse(send, WAITED(ms=f"{self.wait_s * 1000:,.0f}"))
                return
            finally:
                self._line(-1)
        else:
            await self._places.acquire()
        try:
            await self.app(scope, receive, send)
        finally:
            self._places.release()

    def _line(self, step: int) -> None:
        self.waiting += step
        if self.metrics is not None:
            self.metrics.requests_waiting.set(self.waiting)

    async def _refuse(self, send: Send, why: str) -> None:
        self.refused += 1
        if self.metrics is not None:
            self.metrics.requests_refused.inc()
        body = error_body(503, BUSY(why=why, seconds=RETRY_AFTER_S))
        await send({"type": "http.response.start", "status": 503,
                    "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                                (b"retry-after", str(RETRY_AFTER_S).encode())]})
        await send({"type": "http.response.body", "body": body})
