"""Shared by the sandbox benchmarks: evaluations per second from several threads at once."""

from __future__ import annotations

import threading
import time
from typing import Any


def concurrent_rate(pool: Any, call: Any, threads: int, per_thread: int) -> float:
    """Calls/s of ``pool.call(call)`` from ``threads`` threads; every call must succeed."""
    failures: list[Any] = []

    def work() -> None:
        for _ in range(per_thread):
            outcome = pool.call(call)
            if not outcome.ok:
                failures.append(outcome)

    workers = [threading.Thread(target=work) for _ in range(threads)]
    start = time.perf_counter()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    elapsed = time.perf_counter() - start
    assert not failures, failures[:3]
    return threads * per_thread / elapsed
