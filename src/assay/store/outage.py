"""The database away for a while (a restart, a failover, a network cut, SQLite locked past its
busy timeout), told apart from every other failure.

The service's background threads (the run slots, the heartbeat, the change poller, the upload
reaper) must outlive such an outage: a call that fails because the database is away is tried
again after a bounded, exponentially growing, jittered pause (``Backoff``), and the run it served
is left as it was. Every other failure is what it was before (a run that cannot be graded is
marked failed). ``DatabaseHealth`` is the one place that knows whether this process currently
sees the database away: each outage is logged once when it begins and once when it ends, and
``/ready`` answers 503 with its ``reason`` meanwhile.
"""

from __future__ import annotations

import logging
import random
import sqlite3
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import TypeVar

from sqlalchemy import exc as sa_exc

log = logging.getLogger("assay.store.outage")
T = TypeVar("T")

FIRST_PAUSE_S = 0.1
"""The first pause after a call failed on an outage."""
LONGEST_PAUSE_S = 5.0
"""Pauses double up to this: a database that comes back is used again within about this long."""


_SQLITE_AWAY = ("database is locked", "database table is locked", "database is busy", "unable to open database",
                "disk i/o error")
"""What SQLite says when it cannot be used for now; its other ``OperationalError``s (no such table,
a syntax error) are a statement refused."""


def is_outage(error: BaseException) -> bool:
    """True when ``error`` says the database cannot be reached or used for now, as opposed to a
    statement it refused (a constraint, a bad value, a missing table): connection refused or lost,
    the server shutting down, SQLite locked, no connection free in the pool in time."""
    if isinstance(error, sa_exc.TimeoutError):  # the pool had no connection to give in time
        return True
    origin: BaseException = error
    if isinstance(error, sa_exc.DBAPIError):
        if error.connection_invalidated:
            return True
        origin = error.orig if isinstance(error.orig, BaseException) else error
    if isinstance(origin, sqlite3.Error):
        return isinstance(origin, sqlite3.OperationalError) and str(origin).lower().startswith(_SQLITE_AWAY)
    try:  # the driver's own error, also where a raw connection is used (PostgreSQL's COPY)
        import psycopg
    except ImportError:  # pragma: no cover  SQLite-only installs
        return isinstance(error, (sa_exc.OperationalError, sa_exc.InterfaceError))
    if isinstance(origin, psycopg.Error):
        return isinstance(origin, (psycopg.OperationalError, psycopg.InterfaceError))
    return isinstance(error, (sa_exc.OperationalError, sa_exc.InterfaceError))


class Backoff:
    """Pauses for one caller's retries: ``FIRST_PAUSE_S`` doubling up to ``LONGEST_PAUSE_S``, each
    drawn at random between half and all of it (servers that lost the database together do not
    come back in step); ``reset`` after a success."""

    def __init__(self, first_s: float = FIRST_PAUSE_S, longest_s: float = LONGEST_PAUSE_S,
                 rng: random.Random | None = None) -> None:
        self.first_s = first_s
        self.longest_s = longest_s
        self._next = first_s
        self._rng = rng or random.Random()

    def pause(self) -> float:
        """The next pause, in seconds."""
        ceiling = self._next
        self._next = min(self.longest_s, self._next * 2)
        return ceiling * (0.5 + 0.5 * self._rng.random())

    def reset(self) -> None:
        self._next = self.first_s


class DatabaseHealth:
    """Whether this process sees the database away, and since when: the background threads
    report what their calls met (``failed``, ``succeeded``), each for itself. The outage lasts
    while any thread's last call failed on it: a locked SQLite still answers reads, so one
    thread's read going through says nothing of another's write.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._lock = threading.Lock()
        self._failing: set[str] = set()
        """The threads whose last call failed on an outage."""
        self._since: float | None = None
        self._began = ""
        self._error = ""
        self._where = ""
        self.outages = 0
        """Outages seen since the start (each counted once)."""

    def failed(self, where: str, error: BaseException) -> bool:
        """Note that the call ``where`` failed with ``error``; True when that is an outage (then
        logged once per outage, with the first place that met it), False for any other failure."""
        if not is_outage(error):
            return False
        with self._lock:
            self._failing.add(threading.current_thread().name)
            began = self._since is None
            if began:
                self._since = self.clock()
                self._began = datetime.now(UTC).strftime("%H:%M:%S UTC")
                self._where = where
                self.outages += 1
            self._error = _said(error)
        if began:
            log.warning("the database is unreachable (%s, met by %s): background work waits and retries until it "
                        "is back; runs are left as they are", self._error, where)
        return True

    def succeeded(self) -> None:
        """This thread's call reached the database: the outage is over once no thread's last call
        failed on it."""
        if self._since is None:  # the common case: no lock
            return
        with self._lock:
            self._failing.discard(threading.current_thread().name)
            since = None
            if not self._failing:
                since, self._since = self._since, None
        if since is not None:
            log.warning("the database is back after %.1f s; background work goes on", self.clock() - since)

    def reason(self) -> str | None:
        """Why this process cannot grade now, or None when it sees the database."""
        with self._lock:
            if self._since is None:
                return None
            return (f"the database has been unreachable for {self.clock() - self._since:.0f} s (since {self._began}, "
                    f"first met by {self._where}): {self._error}; grading waits and retries")

    def call(self, action: Callable[[], T], where: str, stop: threading.Event,
             backoff: Backoff | None = None) -> tuple[bool, T | None]:
        """``action()`` until it returns, pausing after each outage (any other error is raised);
        ``(True, value)``, or ``(False, None)`` when ``stop`` was set first."""
        backoff = backoff or Backoff()
        while not stop.is_set():
            try:
                value = action()
            except Exception as error:
                if not self.failed(where, error):
                    raise
                stop.wait(backoff.pause())
                continue
            self.succeeded()
            return True, value
        return False, None


def _said(error: BaseException) -> str:
    """The error in one short line: its type and the first line of its text (no SQL)."""
    origin = getattr(error, "orig", None) or error
    first = str(origin).strip().splitlines()[0] if str(origin).strip() else ""
    return f"{type(origin).__name__}: {first[:200]}" if first else type(origin).__name__


class Pacing:
    """The hooks of a poller (``core.periodic.Periodic``) that waits out outages: after a failure
    on an outage, the next turn comes after a backoff pause (None for any other failure, which
    keeps the poller's own interval); a success ends the outage and resets the pauses."""

    def __init__(self, health: DatabaseHealth, where: str) -> None:
        self.health = health
        self.where = where
        self.backoff = Backoff()

    def failure(self, error: Exception) -> float | None:
        return self.backoff.pause() if self.health.failed(self.where, error) else None

    def success(self) -> None:
        self.backoff.reset()
        self.health.succeeded()
