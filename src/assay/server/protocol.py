"""The HTTP/1.1 protocol of ``assay serve``: uvicorn's httptools protocol with a bounded head.

uvicorn hands every byte to httptools, which gathers a header's pieces until the header ends:
a 64 MiB header to ``/health`` was read whole (and answered 200). The limits have to hold for
the bytes read off the socket, before any ASGI code could look at ``scope["headers"]``, so they
live here, in front of the parser:

- the request line and headers together, counted as they arrive, at most
  ``ASSAY_API_MAX_HEADER_BYTES``; at most ``ASSAY_API_MAX_HEADERS`` header lines: beyond
  either, 431 and the connection closed, the rest never read;
- the head must be complete within ``ASSAY_API_HEADER_TIMEOUT_S`` of the connection (or of the
  request's first byte on a kept-alive one): else 408 and closed (a connection that sent
  nothing is closed without an answer).

A refusal here has a request id like every other answer (``X-Request-Id``, ``requestId``), is
logged with it and counted in ``assay_http_refused_total{reason}``.

uvicorn builds the protocol from an import path in each process (``--workers N`` starts them
afresh), so the class reads its limits from the environment once per process (``HeadLimits``).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from typing import Any, ClassVar

from uvicorn.protocols.http.httptools_impl import STATUS_LINE, HttpToolsProtocol

from assay.core.messages import Phrase
from assay.server.edge import SECURITY_HEADERS
from assay.server.errors import error_body
from assay.server.logs import new_request_id
from assay.settings import Settings

PROTOCOL = f"{__name__}:BoundedHttpProtocol"
"""What ``uvicorn.run(http=...)`` is given."""

HEAD_TOO_LARGE = Phrase("api.head_too_large", "request line and headers larger than {limit} bytes: send less "
                                              "(a shorter URL, fewer or smaller cookies and headers)")
TOO_MANY_HEADERS = Phrase("api.too_many_headers", "more than {limit} header lines in one request")
HEAD_TOO_SLOW = Phrase("api.head_timeout", "the request line and headers did not arrive within {seconds} s")

log = logging.getLogger("assay.server.edge")
_END = b"\r\n\r\n"
_LINGER_S = 2.0


@dataclass(frozen=True, slots=True)
class HeadLimits:
    """The head's limits, from the settings."""

    max_bytes: int
    max_headers: int
    timeout_s: float

    @classmethod
    def of(cls, settings: Settings) -> HeadLimits:
        return cls(settings.api_max_header_bytes, settings.api_max_headers, settings.api_header_timeout_s)


class BoundedHttpProtocol(HttpToolsProtocol):
    """``HttpToolsProtocol`` that counts each request's head as it is read and times it."""

    limits: ClassVar[HeadLimits | None] = None
    """Set at the composition root (``assay serve`` in its own process, ``app_from_env`` in each of
    its ``--workers``); the defaults otherwise."""

    def __init__(self, config: Any, server_state: Any, app_state: dict[str, Any],
                 _loop: asyncio.AbstractEventLoop | None = None) -> None:
        super().__init__(config, server_state, app_state, _loop)
        if BoundedHttpProtocol.limits is None:
            BoundedHttpProtocol.limits = HeadLimits.of(Settings())
        self._limits: HeadLimits = BoundedHttpProtocol.limits
        self._in_head = True
        self._head_bytes = 0
        self._head_lines = 0
        self._tail = b""  # the last bytes of the head so far: its end may straddle two reads
        self._head_timer: asyncio.TimerHandle | None = None
        self._refused = False

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]  # as uvicorn types it
        super().connection_made(transport)
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self._refused:
            return
        if self._in_head:
            if self._head_timer is None:
                self._arm()
            if not self._count_head(data):
                return
        super().data_received(data)

    def on_headers_complete(self) -> None:
        self._in_head = False
        self._disarm()
        super().on_headers_complete()

    def on_message_complete(self) -> None:
        super().on_message_complete()
        # What comes next on this connection is the next request's head.
        self._in_head, self._head_bytes, self._head_lines, self._tail = True, 0, 0, b""

    def _count_head(self, data: bytes) -> bool:
        """Count the part of ``data`` that belongs to the head; False once refused."""
        window = self._tail + data
        end = window.find(_END)
        part = data if end < 0 else data[:max(0, end + len(_END) - len(self._tail))]
        self._head_bytes += len(part)
        self._head_lines += part.count(b"\n")
        self._tail = window[-(len(_END) - 1):] if end < 0 else b""
        limits = self._limits
        if self._head_bytes > limits.max_bytes:
            self._refuse(431, "head_too_large", HEAD_TOO_LARGE(limit=f"{limits.max_bytes:,}"))
            return False
        if self._head_lines > limits.max_headers + 2:  # the request line and the blank line end it
            self._refuse(431, "too_many_headers", TOO_MANY_HEADERS(limit=f"{limits.max_headers:,}"))
            return False
        return True

    def _arm(self) -> None:
        self._disarm()
        self._head_timer = self.loop.call_later(self._limits.timeout_s, self._head_timed_out)

    def _disarm(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _head_timed_out(self) -> None:
        self._head_timer = None
        if not self._in_head or self._refused or self.transport.is_closing():
            return
        if self._head_bytes == 0:  # nothing asked: nothing to answer
            self._refused = True
            self.transport.close()
            return
        self._refuse(408, "head_timeout", HEAD_TOO_SLOW(seconds=f"{self._limits.timeout_s:g}"))

    def _refuse(self, status: int, reason: str, message: str) -> None:
        """Answer ``status`` with ``{code, message, requestId}`` and close: the rest of the
        request is never read."""
        self._refused = True
        self._disarm()
        request_id = new_request_id()
        client = "%s:%d" % self.client if self.client else "?"
        log.warning("refused a request from %s: %s", client, message, extra={"request_id": request_id})
        metrics = self.app_state.get("assay_metrics")
        if metrics is not None:
            metrics.refused(reason)
        body = error_body(status, message, request_id=request_id)
        headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
                   (b"connection", b"close"), (b"x-request-id", request_id.encode()), *SECURITY_HEADERS]
        for name, value in self.server_state.default_headers:
            headers.append((name, value))
        head = b"".join(name + b": " + value + b"\r\n" for name, value in headers)
        self.transport.write(STATUS_LINE[status] + head + b"\r\n" + body)
        # Closing at once while the client still sends would reset the connection, and a reset
        # can drop the answer before the client reads it: stop writing, throw away what still
        # comes (``data_received`` ignores it) for a moment, then close.
        if self.transport.can_write_eof():
            self.transport.write_eof()
            self.loop.call_later(_LINGER_S, self.transport.close)
        else:
            self.transport.close()
