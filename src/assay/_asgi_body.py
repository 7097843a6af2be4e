"""Reading a request body within a limit, and handing it on, for the ASGI guards of both
services (``server/limits.py``, ``sandbox_service/guard.py``): a guard reads the body to count it
(or check it) before the app sees it, then gives the app a ``receive`` that replays it."""

from __future__ import annotations

from collections import deque
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]


async def read_body(receive: Receive, limit: int) -> bytes | int | None:
    """The whole body; its size so far (an int) once it passes ``limit``; None on a disconnect."""
    _, body = await read_messages(receive, limit)
    return body


async def read_messages(receive: Receive, limit: int) -> tuple[list[Message], bytes | int | None]:
    """The messages read, as they came (to hand on with ``replay``), and what ``read_body``
    answers: the whole body, its size so far once it passes ``limit``, or None on a disconnect."""
    messages: list[Message] = []
    size = 0
    while True:
        message = await receive()
        messages.append(message)
        if message["type"] != "http.request":
            return messages, None
        size += len(message.get("body", b""))
        if size > limit:
            return messages, size
        if not message.get("more_body", False):
            return messages, b"".join(m.get("body", b"") for m in messages)


def replay(read: bytes | list[Message], receive: Receive) -> Receive:
    """A ``receive`` that hands the app what was read first (a whole body, or the messages as
    they came), then listens to the connection again (so the app still hears a disconnect)."""
    pending = deque([{"type": "http.request", "body": read, "more_body": False}] if isinstance(read, bytes)
                    else read)

    async def again() -> Message:
        return pending.popleft() if pending else await receive()

    return again
