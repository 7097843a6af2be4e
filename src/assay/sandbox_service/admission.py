"""A bounded queue in front of the sandbox, so that load is turned away rather than piled up.

At most ``workers`` jobs run at once, each in a thread of its own executor (the sandbox's
calls block; the event loop never does); at most ``queue`` more wait for a slot. A request
that finds both full is refused at once (``QueueFull``: the route answers 503 with
``Retry-After``), whatever its size. Counters are touched only on the event loop's thread.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from assay.core.errors import AssayError

T = TypeVar("T")

RETRY_AFTER_S = 1
"""The hint given with a 503; HTTP's ``Retry-After`` counts whole seconds."""


class QueueFull(AssayError):
    """Every slot is running and the queue is full."""


class Admission:
    """Runs blocking jobs off the event loop, ``workers`` at a time, ``queue`` more waiting."""

    def __init__(self, workers: int, queue: int) -> None:
        self.workers = workers
        self.queue = queue
        self.running = 0
        self.waiting = 0
        self._slots = asyncio.Semaphore(workers)
        self._executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="assay-sandbox")

    async def run(self, job: Callable[..., T], *args: Any) -> T:
        """``job(*args)`` in a worker thread once a slot is free; ``QueueFull`` when none can be waited for."""
        if self.running + self.waiting >= self.workers + self.queue:
            raise QueueFull
        self.waiting += 1
        try:
            await self._slots.acquire()
        finally:
            self.waiting -= 1
        self.running += 1
        try:
            return await asyncio.get_running_loop().run_in_executor(self._executor, job, *args)
        finally:
            self.running -= 1
            self._slots.release()

    def occupancy(self) -> dict[str, int]:
        """For ``GET /health``: ``{workers, running, queued, queueLimit}``."""
        return {"workers": self.workers, "running": self.running, "queued": self.waiting, "queueLimit": self.queue}

    def close(self) -> None:
        self._executor.shutdown(wait=True, cancel_futures=True)
