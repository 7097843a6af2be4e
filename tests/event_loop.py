"""``asyncio.run`` on a thread of its own, for tests that drive asyncio themselves: the browser
tests' Playwright (sync API) keeps an event loop running in the main thread for the rest of the
session, and ``asyncio.run`` refuses to start beside a running loop."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

T = TypeVar("T")


def run(coroutine: Coroutine[Any, Any, T]) -> T:
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="asyncio-run") as pool:
        return pool.submit(asyncio.run, coroutine).result()
