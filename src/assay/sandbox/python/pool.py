"""``PythonPool``: a thread-safe pool of zygotes that runs Python evaluations in confined children."""

from __future__ import annotations

import logging
import math
import os
import queue
import signal
import threading
import weakref
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any

import orjson

from assay.core.interfaces import CodeBatch, CodeCall, CodeOutcome
from assay.core.result import ErrorCode
from assay.core.source import check_python_source
from assay.sandbox.chunks import encode_args, refused, spread
from assay.sandbox.confine import REQUIRED_LAYERS
from assay.sandbox.python.handle import Child, Zygote, ZygoteGone
from assay.sandbox.python.outcome import classify
from assay.sandbox.python.session import exchange

log = logging.getLogger("assay.sandbox")
MAX_MEMORY_MB = 4096
"""The largest ``memory_mb`` a call may ask for; more is lowered to it."""


class PythonPool:
    """Runs ``CodeCall``s for ``language="python"``; many threads may call ``call`` at once.

    ``size`` zygotes (default: one per CPU core) start on first use; each serves one
    evaluation at a time and forks the next child while the current one runs. If one of
    ``required_layers`` (names from ``confine.probe_layers``) is missing, every call answers
    ``unavailable``, unless ``weak`` is set (the settings' ``sandbox_allow_weak``), in which
    case the missing layers are skipped loudly. ``demote_after_s``: a child that runs longer
    goes on at the lowest CPU priority (``sandbox.priority``; None: never). ``spare``: started
    zygotes kept idle in reserve (a server's pool, shared by users): whenever a call leaves
    fewer, another starts in the background, so that the next caller, say a test in the editor
    while a colleague's run holds the warm ones, does not pay a zygote's start (a few hundred
    milliseconds).
    """

    def __init__(self, size: int | None = None, *, weak: bool = False, uid: int = 65534,
                 required_layers: tuple[str, ...] = REQUIRED_LAYERS, demote_after_s: float | None = None,
                 spare: int = 0) -> None:
        self.size = max(1, size or os.cpu_count() or 1)
        self.weak = weak
        self.demote_after_s = demote_after_s
        self.spare = max(0, min(spare, self.size))
        self._options = {"weak": weak, "uid": uid, "required_layers": list(required_layers)}
        self._all = [Zygote(self._options) for _ in range(self.size)]
        self._idle = _Idle(self._all)
        self._warming = False
        self._in_flight: dict[int, Child] = {}
        """Children evaluating now: ``close`` kills them."""
        self._closed = False
        self._refused: str | None = None
        self.hello: dict[str, Any] = {}
        self._lock = threading.Lock()
        self._threads: ThreadPoolExecutor | None = None  # runs a batch's chunks on every zygote at once
        # weakref.finalize, in both pools: a pool dropped without close() stops its processes
        # when it is collected, one still open stops them at interpreter exit, and the finalizer
        # holds no reference to the pool. (An atexit hook acts only at exit, and keeps one entry
        # per pool ever made.)
        weakref.finalize(self, _stop_all, self._all)

    def call(self, request: CodeCall) -> CodeOutcome:
        """Run ``request.function`` of ``request.source`` with ``request.args`` in a fresh child."""
        return self.call_batch(CodeBatch(request.language, request.source, [request.args], request.function,
                                         request.timeout_ms, request.memory_mb))[0]

    def call_batch(self, batch: CodeBatch) -> list[CodeOutcome]:
        """One outcome per sample of ``batch``, in order. The samples go to the zygotes' children
        in chunks (``sandbox.chunks``: up to 256 samples and 4 MiB of arguments each), run at
        once on every zygote (on ``batch.spread`` of them at most); each sample has the batch's
        limits to itself."""
        memory_mb = max(1, min(int(batch.memory_mb), MAX_MEMORY_MB))
        timeout_ms = max(1, int(batch.timeout_ms))
        limits = {"timeout_ms": timeout_ms, "memory_mb": memory_mb,
                  "cpu_seconds": math.ceil(timeout_ms / 1000) + 1}
        if batch.language != "python":
            return refused(len(batch.args), limits, f"PythonPool runs python evaluators, not {batch.language}")
        header = orjson.dumps({"source": batch.source, "function": batch.function,
                               "memory_mb": memory_mb, "timeout_ms": timeout_ms})
        return spread(batch.args, encode_args, limits, min(self.size, batch.spread or self.size),
                      partial(self._run_chunk, header, timeout_ms, memory_mb, limits), self._executor)

    def _run_chunk(self, header: bytes, timeout_ms: int, memory_mb: int, limits: dict[str, Any],
                   chunk: list[tuple[int, bytes]]) -> list[CodeOutcome]:
        """Outcomes for one chunk on one zygote: a child takes the samples in turn; when it stops
        early (a sample's timeout, memory, crash), a fresh child takes the rest."""
        lines = [line for _i, line in chunk]
        got: list[CodeOutcome] = []
        if self._refused or self._closed:
            return [self._unavailable(dict(limits)) for _ in lines]
        zygote = self._idle.get()
        if self.spare:
            self._keep_spare()
        try:
            while len(got) < len(lines):
                got += self._run(zygote, header, lines[len(got):], timeout_ms, memory_mb, limits)
        finally:
            self._idle.put(zygote)
        for outcome in got:
            outcome.limits = dict(limits)
        return got

    def _run(self, zygote: Zygote, header: bytes, lines: list[bytes], timeout_ms: int, memory_mb: int,
             limits: dict[str, Any]) -> list[CodeOutcome]:
        """Outcomes for the samples one child answered (at least one)."""
        for attempt in (1, 2):  # a zygote found dead (OOM killer, operator) is replaced once
            try:
                if self._closed or self._refused:
                    return [self._unavailable(limits) for _ in lines]
                if not zygote.alive:
                    self._start(zygote)
                limits["layers"] = self.hello.get("active_layers", [])
                child = zygote.take_child()
                with self._lock:
                    self._in_flight[child.pid] = child
                try:
                    if self._closed:  # closed meanwhile: its kill may have missed this child
                        _kill(child)
                    session = exchange(child, header + b"\n" + b"\n".join(lines), len(lines), timeout_ms / 1000,
                                       self.demote_after_s)
                finally:
                    with self._lock:
                        self._in_flight.pop(child.pid, None)
                    child.close()
                try:
                    status = None
                    if session.released:
                        zygote.reap_later(child.pid)  # its teardown overlaps the next evaluation
                    elif session.exited:
                        status = zygote.reap(child.pid)
                except ZygoteGone:
                    if not session.answered or self._closed:
                        raise  # no result: the child died with its zygote, so run it again
                    zygote.stop()
                    session.tail, status = None, None  # the sample it was on goes to a fresh child
                got = [classify(ex, None, timeout_ms, memory_mb) for ex in session.answered]
                if session.tail is not None:  # the sample it stopped on: killed by ``close``, or its own end
                    got.append(self._unavailable(limits) if self._closed
                               else classify(session.tail, status, timeout_ms, memory_mb))
                return got
            except ZygoteGone as exc:
                zygote.stop()
                if exc.refused:
                    self._refused = str(exc)
                    return [self._unavailable(limits) for _ in lines]
                if attempt == 2 or self._closed:
                    return [CodeOutcome(error=ErrorCode.UNAVAILABLE, limits=limits,
                                        message=f"the Python sandbox failed: {exc}") for _ in lines]
        raise AssertionError("unreachable")

    def _keep_spare(self) -> None:
        """Start idle zygotes in the background until ``spare`` started ones wait (one thread
        at a time)."""
        with self._lock:
            if self._warming or self._closed or self._refused:
                return
            self._warming = True
        threading.Thread(target=self._warm, name="assay-sandbox-warm", daemon=True).start()

    def _warm(self) -> None:
        try:
            while not self._closed and not self._refused:
                zygote = self._idle.take_cold(self.spare)
                if zygote is None:
                    return
                try:
                    self._start(zygote)
                except ZygoteGone as exc:
                    if exc.refused:
                        self._refused = str(exc)
                    return  # a call tries it again, and says why it cannot start
                finally:
                    self._idle.put(zygote, warmed=True)
                    if self._closed:  # ``close`` left it to this thread
                        zygote.stop()
        finally:
            with self._lock:
                self._warming = False

    def _executor(self) -> ThreadPoolExecutor:
        with self._lock:
            if self._threads is None:
                self._threads = ThreadPoolExecutor(self.size, thread_name_prefix="assay-sandbox")
            return self._threads

    def _start(self, zygote: Zygote) -> None:
        hello = zygote.start()
        with self._lock:
            if not self.hello:
                self.hello = hello
                if hello.get("missing_layers"):
                    log.warning("weak mode (ASSAY_SANDBOX_ALLOW_WEAK): Python code evaluators run WITHOUT "
                                "these sandbox layers: %s", ", ".join(hello["missing_layers"]))
                if hello.get("missing_modules"):
                    log.warning("allow-listed modules not installed: %s", ", ".join(hello["missing_modules"]))

    def _unavailable(self, limits: dict[str, Any]) -> CodeOutcome:
        message = self._refused or "the Python sandbox is closed"
        return CodeOutcome(error=ErrorCode.UNAVAILABLE, message=message, limits=limits)

    def start(self) -> dict[str, Any]:
        """Start every zygote now instead of on first use; return the first one's hello."""
        taken = [self._idle.get() for _ in self._all]
        try:
            for zygote in taken:
                if not zygote.alive and not self._refused:
                    try:
                        self._start(zygote)
                    except ZygoteGone as exc:
                        if not exc.refused:
                            raise
                        self._refused = str(exc)
        finally:
            for zygote in taken:
                self._idle.put(zygote)
        return self.hello

    def started_idle(self) -> int:
        """Started zygotes idle now: the reserve a caller finds ready (``spare``, once warmed)."""
        return self._idle.started()

    @property
    def refused(self) -> str | None:
        """Why the pool refuses untrusted code (a missing layer), or None."""
        return self._refused

    def close(self, wait_s: float = 10.0) -> None:
        """Stop every zygote and its children, those evaluating now at once (their calls answer
        at once, as their code's end); waits up to ``wait_s`` for the calls to hand their
        zygotes back."""
        with self._lock:
            self._closed = True
            for child in self._in_flight.values():
                _kill(child)
        taken = self._idle.drain(len(self._all), wait_s)
        warming = self._idle.warming()  # being started in reserve: their thread stops them (``_warm``)
        _stop_all([zygote for zygote in self._all if zygote not in warming])
        if self._threads is not None:
            self._threads.shutdown(wait=False)
        for zygote in taken:  # a caller still queued for a slot gets one and answers `unavailable`
            self._idle.put(zygote)

    def check(self, language: str, source: str, function: str = "evaluate") -> str | None:
        """None when ``source`` compiles and defines a top-level ``function``; else the problem,
        with its line. Nothing runs: see ``core.source``."""
        if language != "python":
            return f"PythonPool checks python evaluators, not {language}"
        return check_python_source(source, function)

    def __enter__(self) -> PythonPool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _kill(child: Child) -> None:
    """SIGKILL a child through its pidfd (never another process that took its id)."""
    try:
        signal.pidfd_send_signal(child.pidfd, signal.SIGKILL)
    except OSError:  # gone already
        pass


def _stop_all(zygotes: list[Zygote]) -> None:
    for zygote in zygotes:
        zygote.stop()


class _Idle:
    """The idle zygotes: ``get`` hands out a started one when there is one (the one put back
    last: warm in every cache), or the one being started in reserve when it is (it is ready
    sooner than one started now), else a cold one; so a pool with more zygotes than its load
    needs (a server's, with more workers than cores) starts the others only when calls overlap
    or to keep its reserve."""

    def __init__(self, zygotes: list[Zygote]) -> None:
        self._items = list(zygotes)
        self._warming: list[Zygote] = []
        self._cond = threading.Condition()

    def get(self, timeout: float | None = None) -> Zygote:
        """An idle zygote, waiting up to ``timeout`` for one (``queue.Empty`` after it)."""
        with self._cond:
            if not self._cond.wait_for(lambda: self.started() or (self._items and not self._warming), timeout):
                raise queue.Empty
            started = [i for i, zygote in enumerate(self._items) if zygote.alive]
            return self._items.pop(started[-1] if started else -1)

    def put(self, zygote: Zygote, warmed: bool = False) -> None:
        """``zygote`` idle again; ``warmed``: it comes from ``take_cold``."""
        with self._cond:
            self._items.append(zygote)
            if warmed:
                self._warming.remove(zygote)
            self._cond.notify_all()

    def take_cold(self, spare: int) -> Zygote | None:
        """An idle zygote not started, to start and ``put(warmed=True)``, when fewer than
        ``spare`` started ones are idle; else None."""
        with self._cond:
            if self.started() >= spare:
                return None
            cold = [i for i, zygote in enumerate(self._items) if not zygote.alive]
            if not cold:
                return None
            zygote = self._items.pop(cold[-1])
            self._warming.append(zygote)
            return zygote

    def warming(self) -> list[Zygote]:
        """Zygotes taken by ``take_cold`` and not put back yet."""
        with self._cond:
            return list(self._warming)

    def drain(self, total: int, wait_s: float) -> list[Zygote]:
        """Every idle zygote, once all ``total`` are idle or being started in reserve (waits up
        to ``wait_s`` for calls to hand theirs back)."""
        with self._cond:
            self._cond.wait_for(lambda: len(self._items) + len(self._warming) >= total, wait_s)
            taken, self._items = self._items, []
            return taken

    def started(self) -> int:
        """Started zygotes idle now."""
        with self._cond:
            return sum(zygote.alive for zygote in self._items)
