"""One user's code evaluations in flight across a Ray cluster, at most ``ASSAY_USER_CODE_CAP``
(``ASSAY_RUN_ENGINE=ray``).

On Ray a run's code runs in its own actor's sandbox (``service.ray_slices``), not behind a
server's ``FairGate``. So each run actor's code runner is a ``FairCodeRunner`` whose gate is a
``ClusterGate``: before a piece of a batch goes to the actor's sandbox it takes permits for the
run's user from one named, detached actor, ``CodePermits`` (``assay-code-permits`` in the
``assay`` namespace), and gives them back after. Every server that sends runs to the cluster
finds the same actor by its name, so the cap holds for a user's runs whichever servers lease
their slices.

Permits are leased, so none leaks: their holder (a run actor's process) renews the ones it holds
every third of ``ASSAY_RUN_LEASE_S``, and the book drops a permit not renewed for a whole lease.
A run actor that dies (killed, its node lost, its server gone) frees its permits within a lease.
If the book's actor dies, Ray starts it again, empty, and the holders' next renewals put back
what they hold: until then (a third of a lease at most) a user may have up to twice the cap in
flight. A permit's id starts with its holder's name (a run actor's, given by its server), so a
server that stops and kills its run actors gives their permits back at once (``drop``), rather
than leaving the user's other runs short of permits for a lease; a dropped holder's calls still
waiting for a permit then get none.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from assay.core.interfaces import CodeRunner
from assay.core.periodic import Periodic
from assay.runner.sizing import code_slots
from assay.service.fairness import FairCodeRunner

log = logging.getLogger("assay.server.ray")
BOOK_NAME = "assay-code-permits"
NAMESPACE = "assay"
ATTEMPTS = 5
"""Tries of a call to the book while Ray restarts it (half a second apart)."""
DROPPED_KEPT = 1024
"""Dropped holders the book remembers (their waiting calls get no permit)."""


@dataclass(slots=True)
class _Permit:
    user: str
    weight: int
    expires: float


class PermitBook:
    """The permits in force, per user: what ``CodePermits`` keeps (no Ray here, to be testable)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._permits: dict[str, _Permit] = {}
        self._in_flight: dict[str, int] = {}

    def take(self, user: str, weight: int, cap: int, lease_s: float, holder: str = "") -> str | None:
        """A new permit's id (``holder/…`` when a holder is named), or None when ``user`` holds
        too many (``cap`` at most, but a user with nothing in flight may take one over it: a call
        never waits forever)."""
        self.expire()
        held = self._in_flight.get(user, 0)
        if held and held + weight > cap:
            return None
        permit = f"{holder}/{uuid.uuid4().hex}" if holder else uuid.uuid4().hex
        self._add(permit, _Permit(user, weight, self.clock() + lease_s))
        return permit

    def drop(self, holders: list[str]) -> int:
        """Give back every permit of ``holders`` (run actors that were killed); returns how many."""
        prefixes = tuple(f"{holder}/" for holder in holders if holder)
        ended = [permit for permit in self._permits if prefixes and permit.startswith(prefixes)]
        for permit in ended:
            self.give_back(permit)
        return len(ended)

    def renew(self, held: list[tuple[str, str, int]], lease_s: float) -> None:
        """Extend ``held`` (permit id, user, weight) by a lease; one the book no longer knows (it
        was started again) is put back."""
        until = self.clock() + lease_s
        for permit, user, weight in held:
            found = self._permits.get(permit)
            if found is None:
                self._add(permit, _Permit(user, weight, until))
            else:
                found.expires = until

    def give_back(self, permit: str) -> bool:
        """Drop ``permit``; False when the book did not hold it (expired, or given back)."""
        found = self._permits.pop(permit, None)
        if found is None:
            return False
        self._in_flight[found.user] -= found.weight
        if not self._in_flight[found.user]:
            del self._in_flight[found.user]
        return True

    def expire(self) -> int:
        """Drop the permits whose lease ended; returns how many."""
        now = self.clock()
        ended = [permit for permit, found in self._permits.items() if found.expires <= now]
        for permit in ended:
            self.give_back(permit)
        return len(ended)

    def in_flight(self) -> dict[str, int]:
        """Evaluations in flight per user (for tests and metrics)."""
        return dict(self._in_flight)

    def _add(self, permit: str, found: _Permit) -> None:
        self._permits[permit] = found
        self._in_flight[found.user] = self._in_flight.get(found.user, 0) + found.weight


class CodePermits:
    """The cluster's ``PermitBook`` as an async Ray actor: ``take`` waits, without holding a
    thread, until the user is under the cap (or a lease ends)."""

    def __init__(self) -> None:
        self.book = PermitBook()
        self.changed = asyncio.Condition()
        self.dropped: OrderedDict[str, None] = OrderedDict()

    async def take(self, user: str, weight: int, cap: int, lease_s: float, holder: str = "") -> str:
        async with self.changed:
            while (permit := self.book.take(user, weight, cap, lease_s, holder)) is None:
                try:  # woken by a permit given back, or in time to see a lease end
                    await asyncio.wait_for(self.changed.wait(), timeout=min(1.0, lease_s / 3))
                except TimeoutError:
                    pass
                if holder in self.dropped:
                    return ""  # its holder was killed while this call waited: no permit
            if holder in self.dropped:
                self.book.give_back(permit)
                return ""
            return permit

    async def drop(self, holders: list[str]) -> int:
        async with self.changed:
            for holder in holders:
                self.dropped[holder] = None
            while len(self.dropped) > DROPPED_KEPT:
                self.dropped.popitem(last=False)
            ended = self.book.drop(holders)
            if ended:
                self.changed.notify_all()
            return ended

    async def renew(self, held: list[tuple[str, str, int]], lease_s: float) -> None:
        self.book.renew(held, lease_s)

    async def give_back(self, permit: str) -> None:
        async with self.changed:
            if self.book.give_back(permit):
                self.changed.notify_all()

    async def in_flight(self) -> dict[str, int]:
        return self.book.in_flight()


def permits_actor() -> Any:
    """The cluster's ``CodePermits`` actor, started by the first caller (Ray must be connected)."""
    import ray

    return ray.remote(CodePermits).options(
        name=BOOK_NAME, namespace=NAMESPACE, lifetime="detached", get_if_exists=True, max_restarts=-1,
        num_cpus=0, max_concurrency=10_000).remote()


class ClusterGate:
    """``FairCodeRunner``'s gate in a run's actor on Ray: ``per_user`` of a user's evaluations in
    flight over the whole cluster, ``slots`` (this actor's sandbox workers) at most in one piece.
    Built in the actor's process (``capped_on_cluster``), where it renews the permits it holds."""

    def __init__(self, slots: int, per_user: int, lease_s: float, holder: str = "") -> None:
        self.slots = max(1, slots)
        self.per_user = max(1, per_user)
        self.lease_s = lease_s
        self.holder = holder
        """The name its permits are given under (``CodePermits.drop`` ends them all)."""
        self._book: Any = None
        self._held: dict[str, tuple[str, int]] = {}
        self._lock = threading.Lock()
        self._renewer: Periodic | None = None

    @contextmanager
    def slot(self, user: str, weight: int = 1) -> Iterator[None]:
        weight = max(1, min(weight, self.per_user))
        permit = self._call("take", user, weight, self.per_user, self.lease_s, self.holder)
        with self._lock:
            self._held[permit] = (user, weight)
            if self._renewer is None:
                self._renewer = Periodic(self._renew, self.lease_s / 3, name="assay-code-permits", log=log,
                                         failed="renewing code permits failed (a lease lets them go)")
                self._renewer.start()
        try:
            yield
        finally:
            with self._lock:
                self._held.pop(permit, None)
            try:
                self._actor().give_back.remote(permit)  # not waited for: a lost one ends with its lease
            except Exception:  # noqa: BLE001 - the book is away: the permit's lease ends it
                log.warning("giving a code permit back failed", exc_info=True)

    def share(self, user: str) -> int:
        """The cluster's book knows no shares: a piece is as wide as the cap."""
        return self.per_user

    def _renew(self) -> None:
        with self._lock:
            held = [(permit, user, weight) for permit, (user, weight) in self._held.items()]
        if held:
            self._call("renew", held, self.lease_s)

    def _call(self, method: str, *args: Any) -> Any:
        """``method`` of the book, waited for; tried again while Ray restarts the book's actor."""
        import ray
        from ray.exceptions import RayActorError

        for attempt in range(ATTEMPTS):
            try:
                return ray.get(getattr(self._actor(), method).remote(*args))
            except RayActorError:
                if attempt == ATTEMPTS - 1:
                    raise
                with self._lock:
                    self._book = None  # found again by name: restarted, or started anew
                time.sleep(0.5)
        raise AssertionError("unreachable")

    def _actor(self) -> Any:
        with self._lock:
            if self._book is None:
                self._book = permits_actor()
            return self._book


def capped_on_cluster(inner: CodeRunner, *, user: str, cap: int, lease_s: float, holder: str = "") -> CodeRunner:
    """``inner`` (a run actor's sandbox) behind the cluster's permits for ``user``, taken as
    ``holder``: what ``service.ray_slices`` asks each run's ``GradingActor`` to wrap its code
    runner with."""
    return FairCodeRunner(inner, ClusterGate(code_slots(inner), cap, lease_s, holder), user=user)
