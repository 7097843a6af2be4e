"""A request body as a blocking file for a worker thread: the dataset readers are synchronous
and read ``fh.read(n)``; the body arrives on the event loop, chunk by chunk. ``BodyFile``
pulls one chunk at a time from the loop (``anyio.from_thread``), so at most one chunk and
the reader's own block are held, whatever the body's size."""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio.from_thread


class BodyFile:
    """``read(n)`` over an async iterator of byte chunks; only usable from a thread that anyio
    started (``run_in_threadpool``), which it blocks while a chunk is awaited."""

    def __init__(self, chunks: AsyncIterator[bytes]) -> None:
        self._chunks = chunks
        self._buffer = bytearray()
        self._done = False
        self.received = 0
        """Bytes taken from the body so far."""

    async def _next(self) -> bytes | None:
        try:
            return await self._chunks.__anext__()
        except StopAsyncIteration:
            return None

    def _fill(self, size: int) -> None:
        while not self._done and (size < 0 or len(self._buffer) < size):
            chunk = anyio.from_thread.run(self._next)
            if chunk is None:
                self._done = True
            else:
                self.received += len(chunk)
                self._buffer += chunk

    def read(self, size: int = -1) -> bytes:
        """Up to ``size`` bytes (all that is left when negative); ``b""`` at the end."""
        self._fill(size)
        if size < 0 or size >= len(self._buffer):
            data = bytes(self._buffer)
            self._buffer.clear()
            return data
        data = bytes(self._buffer[:size])
        del self._buffer[:size]
        return data
