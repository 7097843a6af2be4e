"""A lean plain-HTTP/1.1 transport for the openai SDK's HTTP client (``http_client=``, the
SDK's documented extension point), used for ``http://`` endpoints when no proxy is set.

Why: the SDK's default stack (httpcore's pool over anyio) spends about 1.5 ms of CPU per
call, scanning every pooled connection on each request. Against a local model server that
answers in 50 ms with 32 calls in flight, that CPU on the judge's one event loop thread is
the bottleneck. This transport keeps a stack of idle keep-alive connections per origin on
plain asyncio streams: taking one is O(1). It speaks what chat endpoints need: a buffered
request body, ``Content-Length`` or chunked replies (gzip is decoded by httpx),
and a retry on a fresh connection when a reused one turns out closed by the server. TLS,
proxies and HTTP/2 stay with the SDK's own stack (remote endpoints, whose latency dwarfs it).
"""

from __future__ import annotations

import asyncio

import httpx2

_Conn = tuple[asyncio.StreamReader, asyncio.StreamWriter]
_MAX_HEADER = 64 * 1024


class LeanTransport(httpx2.AsyncBaseTransport):
    """Keep-alive HTTP/1.1 over asyncio streams; errors surface as httpx errors, so the SDK
    maps them (connection errors, timeouts) exactly as with its default transport."""

    def __init__(self, max_idle: int = 256) -> None:
        self._idle: dict[tuple[str, str, int], list[_Conn]] = {}
        self._max_idle = max_idle

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        url = request.url
        if url.scheme != "http":
            raise httpx2.UnsupportedProtocol(f"the lean transport speaks plain HTTP, not {url.scheme}",
                                             request=request)
        origin = (url.scheme, url.host, url.port or 80)
        body = await request.aread()
        head = _head(request, body)
        idle = self._idle.get(origin)
        while idle:  # a reused connection the server has closed fails before any byte: retry fresh
            conn = idle.pop()
            if conn[1].is_closing() or conn[0].at_eof():
                conn[1].close()
                continue
            try:
                return await self._exchange(origin, conn, head, body, request)
            except _Stale:
                continue
        conn = await self._connect(origin)
        try:
            return await self._exchange(origin, conn, head, body, request)
        except _Stale as exc:
            raise httpx2.RemoteProtocolError("the server closed the connection without answering",
                                             request=request) from exc

    async def aclose(self) -> None:
        for conns in self._idle.values():
            for _, writer in conns:
                writer.close()
        self._idle.clear()

    async def _connect(self, origin: tuple[str, str, int]) -> _Conn:
        _, host, port = origin
        try:
            reader, writer = await asyncio.open_connection(host, port, limit=_MAX_HEADER * 4)
        except OSError as exc:
            raise httpx2.ConnectError(str(exc) or type(exc).__name__) from exc
        return reader, writer

    async def _exchange(self, origin: tuple[str, str, int], conn: _Conn, head: bytes, body: bytes,
                        request: httpx2.Request) -> httpx2.Response:
        reader, writer = conn
        done = False
        try:
            try:
                writer.write(head + body)
                await writer.drain()
                raw = await reader.readuntil(b"\r\n\r\n")  # the status line and headers at once
            except asyncio.IncompleteReadError as exc:
                if exc.partial:
                    raise httpx2.ReadError("the connection closed inside the reply's headers",
                                           request=request) from exc
                raise _Stale from exc
            except (ConnectionError, OSError) as exc:
                raise _Stale from exc
            except asyncio.LimitOverrunError as exc:
                raise httpx2.ReadError("the reply's headers are too long", request=request) from exc
            try:
                status, headers, keep = _parse_head(raw)
                content, reusable = await _read_body(reader, headers)
            except (ConnectionError, OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError,
                    ValueError) as exc:
                raise httpx2.ReadError(f"reading the reply failed: {exc}", request=request) from exc
            done = keep and reusable
            return httpx2.Response(status, headers=headers, content=content, request=request)
        finally:
            if done and len(self._idle.setdefault(origin, [])) < self._max_idle:
                self._idle[origin].append(conn)
            else:
                writer.close()  # cancelled (a timeout), failed or not keep-alive: never reused


class _Stale(Exception):
    """A connection that was closed before it answered anything."""


def _head(request: httpx2.Request, body: bytes) -> bytes:
    target = request.url.raw_path
    lines = [request.method.encode() + b" " + target + b" HTTP/1.1"]
    names = set()
    for name, value in request.headers.raw:
        names.add(name.lower())
        lines.append(name + b": " + value)
    if b"host" not in names:
        lines.append(b"Host: " + request.url.netloc)
    if b"content-length" not in names and b"transfer-encoding" not in names:
        lines.append(b"Content-Length: " + str(len(body)).encode())
    return b"\r\n".join(lines) + b"\r\n\r\n"


def _parse_head(raw: bytes) -> tuple[int, list[tuple[bytes, bytes]], bool]:
    first, *lines = raw.split(b"\r\n")
    parts = first.split(None, 2)
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/1."):
        raise ValueError(f"not an HTTP/1.x status line: {first[:80]!r}")
    status = int(parts[1])
    headers = []
    for line in lines:
        if line:
            name, _, value = line.partition(b":")
            headers.append((name.strip(), value.strip()))
    connection = b",".join(v for n, v in headers if n.lower() == b"connection").lower()
    keep = b"close" not in connection and (parts[0] != b"HTTP/1.0" or b"keep-alive" in connection)
    return status, headers, keep


async def _read_body(reader: asyncio.StreamReader, headers: list[tuple[bytes, bytes]]) -> tuple[bytes, bool]:
    """The body bytes, and whether the connection can carry another request after it."""
    fields = {n.lower(): v for n, v in headers}
    if b"chunked" in fields.get(b"transfer-encoding", b"").lower():
        chunks: list[bytes] = []
        while True:
            size = int((await reader.readline()).split(b";")[0].strip(), 16)
            if size == 0:
                while (await reader.readline()) not in (b"\r\n", b"\n", b""):
                    pass  # trailers
                return b"".join(chunks), True
            chunks.append(await reader.readexactly(size))
            await reader.readexactly(2)
    if b"content-length" in fields:
        return await reader.readexactly(int(fields[b"content-length"])), True
    return await reader.read(), False  # no length: the body runs to the end of the connection

