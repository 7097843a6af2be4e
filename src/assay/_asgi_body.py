"""Reading a request body within a limit, and handing it on, for the ASGI guards of both
services (``server/limits.py``, ``sandbox_service/guard.py``): a guard reads the body to count it
(or check it) before the app sees it, then gives the app a ``receive`` that replays it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]


async def read_body(receive: Receive, limit: int) -> bytes | int | None:
    """The whole body; its size so far (an int) once it passes ``limit``; None on a disconnect."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return size
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def replay(body: bytes, receive: Receive) -> Receive:
    """A ``receive`` that hands the app ``body`` once, then listens to the connection again (so
    the app still hears a disconnect)."""
    replayed = False

    async def again() -> Message:
        nonlocal replayed
        if not replayed:
            replayed = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return again
