"""Sharing one server's sandbox fairly between users: task runs and ``/test`` requests alike.

Every code evaluation of the process (a sandbox call, or a piece of a batch) passes through
one ``FairGate`` before it reaches the sandbox. The gate keeps at most ``slots`` sandbox workers
busy (more would only queue inside the sandbox, behind whoever came first) and, when workers
free, gives them to the next user in turn who has a call waiting and is under their cap:
``per_user``, and while others wait, their share of the slots (``slots`` over the users with
work). A batch goes in pieces of one sample per worker until its evaluations prove fast.

The service's sandbox has more workers than cores (``Settings.service_sandbox_workers``): a
sleeping or blocked evaluation uses no CPU, so one user's sleepers leave free workers for the
next user, who is not queued at all; code that runs long is lowered in CPU priority by the
sandbox (``sandbox.priority``), so a busy loop leaves the cores to short evaluations. When every
slot is busy, another user waits for at most one evaluation (or ``PIECE_SECONDS`` of fast ones).

Who is asking travels with the call in a context variable (``acting_for``), set by the run
worker around a slice and by the routes around a test, so graders need not know users exist.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, TypeVar

from assay.core.interfaces import CodeBatch, CodeCall, CodeOutcome, CodeRunner, Resources, call_batch
from assay.runner.sizing import Pacer

PIECE_SECONDS = 0.05
"""About how long one piece of a batch keeps the sandbox's workers once its evaluations prove
fast: with one evaluation of a slow evaluator, the longest another user waits for a worker."""
PIECE_DEPTH = 256
"""Samples one worker takes in one piece at most (the sandboxes' own chunk size)."""

_user: ContextVar[str] = ContextVar("assay_user", default="")
T = TypeVar("T")


@contextmanager
def acting_for(user: str) -> Iterator[None]:
    """Code evaluations in this block (in this thread) are ``user``'s."""
    token = _user.set(user)
    try:
        yield
    finally:
        _user.reset(token)


def as_user(user: str, function: Callable[..., T], *args: Any) -> T:
    """``function(*args)`` acting for ``user``: what a route hands to the threadpool."""
    with acting_for(user):
        return function(*args)


@dataclass(slots=True)
class _Queue:
    waiting: deque[tuple[threading.Event, int]] = field(default_factory=deque)
    running: int = 0


class FairGate:
    """At most ``slots`` sandbox workers busy at once, at most ``per_user`` of them for one
    user (and their share of the slots while others wait), users in turn. A call weighs the
    workers it keeps busy (the sandbox spreads a batch over all of its workers): a user whose
    turn it is waits for room rather than being passed over, so a large batch is never starved
    by a stream of small ones."""

    def __init__(self, slots: int, per_user: int) -> None:
        self.slots = max(1, slots)
        self.per_user = max(1, per_user)
        self._lock = threading.Lock()
        self._users: OrderedDict[str, _Queue] = OrderedDict()
        """Users with work waiting or running, in turn order: the next served goes last."""
        self._running = 0

    def in_flight(self) -> dict[str, int]:
        """Sandbox workers busy now, per user (for metrics and tests)."""
        with self._lock:
            return {user: queue.running for user, queue in self._users.items() if queue.running}

    def waiting(self) -> int:
        """Calls waiting for a sandbox worker, all users together (for metrics)."""
        with self._lock:
            return sum(len(queue.waiting) for queue in self._users.values())

    @contextmanager
    def slot(self, user: str, weight: int = 1) -> Iterator[None]:
        """Hold ``weight`` sandbox workers for ``user`` for the block (waits for its turn)."""
        weight = max(1, min(weight, self.slots))
        ticket = threading.Event()
        with self._lock:
            queue = self._users.get(user)
            if queue is None:  # new in the turn order: nobody has waited on them yet, so first
                queue = self._users[user] = _Queue()
                self._users.move_to_end(user, last=False)
            queue.waiting.append((ticket, weight))
            self._dispatch()
        ticket.wait()
        try:
            yield
        finally:
            with self._lock:
                self._running -= weight
                queue.running -= weight
                if not queue.running and not queue.waiting:
                    self._users.pop(user, None)
                self._dispatch()

    def _dispatch(self) -> None:
        """Hand free workers to waiting users in turn (under the lock)."""
        while True:
            for user, queue in self._users.items():
                if not queue.waiting:
                    continue
                weight = queue.waiting[0][1]
                if queue.running and queue.running + weight > self._cap(user):
                    continue  # at their cap: the next user's turn
                if self._running and self._running + weight > self.slots:
                    return  # their turn, but no room yet: nobody overtakes them
                queue.running += weight
                self._running += weight
                queue.waiting.popleft()[0].set()
                self._users.move_to_end(user)  # served: the others come first next time
                break
            else:
                return


    def share(self, user: str) -> int:
        """Workers ``user`` may keep busy now (``_cap``): how wide their next piece should be."""
        with self._lock:
            return self._cap(user)

    def _cap(self, user: str) -> int:
        """Workers ``user`` may keep busy (under the lock): ``per_user``, and no more than an
        equal share of the slots while another user has a call waiting."""
        if not any(queue.waiting for other, queue in self._users.items() if other != user):
            return self.per_user
        return max(1, min(self.per_user, self.slots // len(self._users)))


class Gate(Protocol):
    """What ``FairCodeRunner`` takes turns through: this server's ``FairGate``, or on Ray the
    cluster's permits (``service.ray_permits``)."""

    slots: int
    """Sandbox workers behind the gate: the widest a piece may spread."""
    per_user: int
    """One user's evaluations in flight at most."""

    def slot(self, user: str, weight: int = 1) -> AbstractContextManager[None]:
        """Hold ``weight`` workers for ``user`` for the block (waits for its turn)."""
        ...

    def share(self, user: str) -> int:
        """Workers ``user`` may keep busy now: at most ``per_user``, less while others wait."""
        ...


class FairCodeRunner:
    """A ``CodeRunner`` whose calls take turns through a ``FairGate``. A batch goes to the inner
    runner in pieces, one after another, each admitted by the gate in its user's turn and spread
    over as many sandbox workers as the user may keep busy: every worker, or the user's cap or
    present share when that is lower (``CodeBatch.spread``), so a piece never puts more of one
    user's evaluations in flight than the cap, nor, while others wait, than their share. The
    first piece is one sample per worker; later ones grow (``runner.sizing.Pacer``) while the
    evaluations prove fast, up to about ``PIECE_SECONDS`` of work per worker. So another user
    waits for one evaluation of a slow evaluator, or about ``PIECE_SECONDS`` of a fast one, and
    a fast batch alone goes in large pieces at the sandbox's speed (at the cap's share of it
    when the cap is below the workers)."""

    def __init__(self, inner: CodeRunner, gate: Gate, *, owns_inner: bool = True, user: str | None = None) -> None:
        self.inner = inner
        self.gate = gate
        self.owns_inner = owns_inner
        self.user = user
        """Whose every call is (a run's actor on Ray); None: the caller's, by ``acting_for``."""

    def call(self, request: CodeCall) -> CodeOutcome:
        with self.gate.slot(self._user(), 1):
            return self.inner.call(request)

    def call_batch(self, batch: CodeBatch) -> list[CodeOutcome]:
        user = self._user()
        widest = min(self.gate.slots, self.gate.per_user, batch.spread or self.gate.slots)
        depth = Pacer(PIECE_SECONDS, first=1, largest=PIECE_DEPTH)  # samples per worker in a piece
        outcomes: list[CodeOutcome] = []
        while len(outcomes) < len(batch.args):
            start = len(outcomes)
            width = max(1, min(widest, self.gate.share(user)))  # workers the piece keeps busy: the user's share now
            piece = replace(batch, args=batch.args[start:start + width * depth.size], spread=width)
            weight = min(len(piece.args), width)  # the sandbox spreads it over that many workers at most
            with self.gate.slot(user, weight):
                began = time.perf_counter()
                done = call_batch(self.inner, piece)
                depth.observe(-(-len(piece.args) // weight), time.perf_counter() - began)
            if len(done) != len(piece.args):
                raise RuntimeError(f"the sandbox answered {len(done)} outcomes for {len(piece.args)} samples")
            outcomes.extend(done)
        return outcomes

    def check(self, language: Any, source: str, function: str = "evaluate") -> str | None:
        return self.inner.check(language, source, function)

    def _user(self) -> str:
        return _user.get() if self.user is None else self.user

    def close(self) -> None:
        """Stop the inner runner when it is this one's."""
        close = getattr(self.inner, "close", None)
        if close is not None and self.owns_inner:
            close()


def fair_resources(resources: Resources, gate: FairGate, *, owned: bool) -> Resources:
    """``resources`` with its code runner behind ``gate`` (a copy: the caller's stays as it is);
    ``owned``: closing the wrapper closes the runner too."""
    if resources.code_runner is None:
        return resources
    return replace(resources, code_runner=FairCodeRunner(resources.code_runner, gate, owns_inner=owned))
