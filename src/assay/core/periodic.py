"""A call repeated on a daemon thread: the service's pollers (change counters, the upload reaper)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable


class Periodic:
    """Calls ``action`` every ``interval_s`` seconds on a daemon thread named ``name``, from
    ``start`` until ``close``. A call that raises never ends the thread: ``on_failure`` may take it
    (a database away for a while) and name the pause before the next try, at most ``interval_s``;
    otherwise it is logged on ``log`` as ``failed`` says and the next turn tries again.
    ``on_success`` hears of every call that returned. With ``again``, a call that returns a true
    value (it found work) is followed by the next at once; ``wake`` starts the next call now."""

    def __init__(self, action: Callable[[], object], interval_s: float, *, name: str, log: logging.Logger,
                 failed: str, on_failure: Callable[[Exception], float | None] | None = None,
                 on_success: Callable[[], None] | None = None, again: bool = False) -> None:
        self.action = action
        self.interval_s = interval_s
        self.name = name
        self.log = log
        self.failed = failed
        self.on_failure = on_failure
        self.on_success = on_success
        self.again = again
        self._stop = threading.Event()
        self._tick = threading.Event()
        """Set by ``wake`` and ``close``: the wait between calls ends."""
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
        self._thread.start()

    def alive(self) -> bool:
        """True while the thread runs (from ``start`` until ``close``)."""
        return self._thread is not None and self._thread.is_alive()

    def wake(self) -> None:
        self._tick.set()

    def close(self) -> None:
        self._stop.set()
        self._tick.set()
        if self._thread is not None:
            self._thread.join(timeout=10)

    def _run(self) -> None:
        wait = self.interval_s
        while True:
            self._tick.wait(wait)
            self._tick.clear()
            if self._stop.is_set():
                return
            wait = self.interval_s
            try:
                found = self.action()
            except Exception as error:  # noqa: BLE001  the thread must outlive any one call
                pause = self.on_failure(error) if self.on_failure is not None else None
                if pause is None:
                    self.log.warning(self.failed, exc_info=True)
                else:
                    wait = min(pause, self.interval_s)
                continue
            if self.on_success is not None:
                self.on_success()
            if self.again and found:
                wait = 0
