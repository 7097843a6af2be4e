"""A call repeated on a daemon thread: the service's pollers (change counters, the upload reaper)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable


class Periodic:
    """Calls ``action`` every ``interval_s`` seconds on a daemon thread named ``name``, from
    ``start`` until ``close``. A call that raises is logged on ``log`` as ``failed`` says, and the
    next turn tries again (the database may be away for a moment)."""

    def __init__(self, action: Callable[[], object], interval_s: float, *, name: str, log: logging.Logger,
                 failed: str) -> None:
        self.action = action
        self.interval_s = interval_s
        self.name = name
        self.log = log
        self.failed = failed
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def _run(self) -> None:
        while not self._stop.wait(self.interval_s):
            try:
                self.action()
            except Exception:  # noqa: BLE001  logged; the next turn tries again
                self.log.warning(self.failed, exc_info=True)
