"""``NodePool``: a thread-safe pool of confined Node.js workers, each running one request at a time."""

from __future__ import annotations

import os
import threading
import time
import weakref
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from assay.core.interfaces import CodeBatch, CodeCall, CodeOutcome
from assay.core.messages import Phrase
from assay.sandbox.chunks import refused, spread
from assay.sandbox.node.batch import WORKER_FAILED, ChunkRunner, encode
from assay.sandbox.node.handle import Confined, Worker, WorkerGone
from assay.sandbox.node.outcome import check_problem, overran
from assay.sandbox.node.runtime import NOT_INSTALLED, WORKER_JS, find_node, hidden_from_others, missing_dependencies
from assay.sandbox.node.session import exchange, handshake

NO_EXECUTABLE = Phrase("sandbox.node.no_executable", "the Node.js executable {node} was not found or is not executable")
NO_NODE = Phrase("sandbox.node.no_node", "node is not installed: Node.js evaluators are unavailable")
CLOSED = Phrase("sandbox.node.closed", "the Node pool is closed")
CANNOT_START = Phrase("sandbox.node.cannot_start", "cannot start node: {error}")
HIDDEN = Phrase("sandbox.node.hidden", "{problem}; the worker runs as uid 65534 and cannot read {path}: put assay and "
                                       "its Node modules where every directory is world-readable (chmod o+rx)")
NEEDS_MODULES = Phrase("sandbox.node.needs_modules", "{problem}; {setup}")
CHECK_TIMEOUT_MS = 2000
"""How long a ``check`` may run the module's top level."""
CHECK_MEMORY_MB = 128


class NodePool:
    """Runs Node.js evaluators (``CodeCall`` with ``language="nodejs"``) in persistent workers.

    Thread-safe: up to ``size`` requests run at once (default: one per CPU core), the rest wait
    for a worker; a batch's chunks (``batch.py``) run on every worker at once. Workers start on
    first use and are replaced after ``max_calls`` evaluated samples, a crash or a watchdog kill:
    past a sample's ``timeout_ms`` plus ``margin_s`` the host kills the worker, whatever the
    worker's own timer did. ``node`` is the executable (default: ``node`` on
    ``PATH``), run under ``locale`` (the settings' ``LANG``). ``weak=True`` runs workers without
    Landlock, seccomp and the uid drop; only the
    isolate, the network namespace and the rlimits remain. ``demote_after_s``: a worker whose
    request runs longer goes on at the lowest CPU priority, and is raised back before it serves
    again (``sandbox.priority``; None: never). ``spare``: started workers kept idle in reserve
    (a server's pool, shared by users): whenever a call leaves fewer, another starts in the
    background, so that the next caller does not pay a worker's start.
    """

    def __init__(self, size: int | None = None, *, weak: bool = False, node: str | None = None,
                 max_calls: int = 20000, margin_s: float = 2.0, startup_s: float = 15.0,
                 demote_after_s: float | None = None, locale: str = "C.UTF-8", spare: int = 0) -> None:
        self.size = max(1, size or os.cpu_count() or 1)
        self.spare = max(0, min(spare, self.size))
        self._warming = False
        self.weak = weak
        self.locale = locale
        self.demote_after_s = demote_after_s
        self.node = find_node(node)
        self._no_node = "" if self.node else NO_EXECUTABLE(node=repr(node)) if node else NO_NODE()
        self.max_calls = max_calls
        self.margin_s = margin_s
        self.startup_s = startup_s
        self._idle: list[Worker] = []
        self._workers: set[Worker] = set()  # every live worker, idle or busy
        self._live = 0  # workers alive or starting: at most `size`
        self._closed = False
        self._cond = threading.Condition()
        self._confined: Confined | None = None
        self._threads: ThreadPoolExecutor | None = None  # runs a batch's chunks on every worker at once
        # weakref.finalize, in both pools: a pool dropped without close() stops its processes
        # when it is collected, one still open stops them at interpreter exit, and the finalizer
        # holds no reference to the pool. (An atexit hook acts only at exit, and keeps one entry
        # per pool ever made.)
        weakref.finalize(self, _kill_all, self._workers)

    def call(self, request: CodeCall) -> CodeOutcome:
        """Run ``request.function`` from ``request.source`` with ``request.args``; never raises."""
        return self.call_batch(CodeBatch(request.language, request.source, [request.args], request.function,
                                         request.timeout_ms, request.memory_mb))[0]

    def call_batch(self, batch: CodeBatch) -> list[CodeOutcome]:
        """One outcome per sample of ``batch``, in order; never raises. The samples go to the
        workers in chunks (``sandbox.chunks``: up to 256 samples and 4 MiB of arguments each),
        on every worker at once (on ``batch.spread`` of them at most); each sample runs in a
        compartment of its own under the batch's limits."""
        limits = {"timeout_ms": batch.timeout_ms, "memory_mb": batch.memory_mb, "layers": []}
        if batch.language != "nodejs":
            return refused(len(batch.args), limits, f"NodePool runs nodejs evaluators, not {batch.language}")
        try:
            runner = ChunkRunner(self, batch)
        except (TypeError, ValueError) as exc:  # a source, function or limit that is not JSON data
            return refused(len(batch.args), limits, f"the batch cannot be sent to a worker: {exc}")
        return spread(batch.args, encode, limits, min(self.size, batch.spread or self.size), runner.run,
                      self._executor)

    def check(self, language: str, source: str, function: str = "evaluate") -> str | None:
        """None when ``source`` compiles and exports ``function``; else the problem, with its line.

        The module's top level runs (bounded, in the sandbox) so that ``module.exports`` is known.
        """
        if language != "nodejs":
            return f"NodePool checks nodejs evaluators, not {language}"
        got = self._roundtrip({"op": "check", "source": source, "function": function,
                               "timeout_ms": CHECK_TIMEOUT_MS, "memory_mb": CHECK_MEMORY_MB},
                              CHECK_TIMEOUT_MS / 1000)
        if isinstance(got, str):
            return None  # unavailable: nothing to say about the code; calls will report it
        return check_problem(got)

    def close(self) -> None:
        """Stop every worker: idle ones now; busy ones are killed now too, and their calls
        answer at once (as their code's end) and reap them."""
        with self._cond:
            self._closed = True
            idle, self._idle = self._idle, []
            self._live -= len(idle)
            self._workers.difference_update(idle)
            busy = list(self._workers)
            self._cond.notify_all()
        for worker in idle:
            worker.kill()
        for worker in busy:
            worker.signal_kill()
        if self._threads is not None:
            self._threads.shutdown(wait=False)

    def __enter__(self) -> NodePool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- internals ---------------------------------------------------------------------
    def _executor(self) -> ThreadPoolExecutor:
        """The threads that run a batch's chunks at once; RuntimeError once the pool is closed."""
        with self._cond:
            if self._closed:
                raise RuntimeError("the Node pool is closed")
            if self._threads is None:
                self._threads = ThreadPoolExecutor(self.size, thread_name_prefix="assay-node")
            return self._threads

    def _roundtrip(self, payload: dict[str, Any], timeout_s: float) -> dict[str, Any] | str:
        """One request on a worker: its response, or why no worker can take it.

        A timeout or a broken worker becomes a response (the worker is replaced)."""
        worker = self._acquire()
        if isinstance(worker, str):
            return worker
        keep = False
        try:
            response = exchange(worker, payload, time.monotonic() + timeout_s + self.margin_s)
            worker.calls += 1
            keep = worker.calls < self.max_calls
        except TimeoutError:
            response = {"status": "timeout", "message": overran(timeout_s * 1000, worker)}
        except (WorkerGone, ValueError) as exc:
            response = {"status": "error", "message": WORKER_FAILED(error=str(exc))}
        finally:
            self._release(worker, keep)
        return response

    def _acquire(self) -> Worker | str:
        if self.node is None:
            return self._no_node
        with self._cond:
            while True:
                if self._closed:
                    return CLOSED()
                if self._idle:
                    worker = self._idle.pop()
                    self._keep_spare()
                    return worker
                if self._live < self.size:
                    self._live += 1
                    break
                self._cond.wait()
        self._keep_spare()
        started = self._start(self.node)
        if isinstance(started, str):
            self._release(None, False)
        return started

    def _keep_spare(self) -> None:
        """Start workers in the background until ``spare`` started ones wait idle (under the
        condition's lock; one thread at a time)."""
        if self.spare and not self._warming and not self._closed and len(self._idle) < self.spare \
                and self._live < self.size:
            self._warming = True
            threading.Thread(target=self._warm, name="assay-sandbox-warm", daemon=True).start()

    def _warm(self) -> None:
        node = self.node
        try:
            while node is not None:
                with self._cond:
                    if self._closed or len(self._idle) >= self.spare or self._live >= self.size:
                        return
                    self._live += 1
                started = self._start(node)
                if isinstance(started, str):
                    self._release(None, False)
                    return  # a call tries again, and says why it cannot start
                self._release(started, True)
        finally:
            with self._cond:
                self._warming = False

    def _start(self, node: str) -> Worker | str:
        """A new worker that said it is ready, or why none could start."""
        problem = missing_dependencies()
        if problem:
            return problem
        try:
            if self._confined is None:
                self._confined = Confined(node, self.weak)
            worker = Worker(node, self._confined, self.locale)
        except Exception as exc:  # noqa: BLE001 - a call never raises: report it as unavailable
            return CANNOT_START(error=str(exc))
        with self._cond:
            self._workers.add(worker)
        problem = handshake(worker, time.monotonic() + self.startup_s)
        if problem is None:
            return worker
        with self._cond:
            self._workers.discard(worker)
        worker.kill()
        modules = self._confined.modules if self._confined is not None else None
        hidden = None if self.weak else (hidden_from_others(WORKER_JS) or (modules and hidden_from_others(modules)))
        if hidden:
            problem = HIDDEN(problem=problem, path=hidden)
        return problem if "node_modules" not in problem else NEEDS_MODULES(problem=problem, setup=NOT_INSTALLED)

    def _release(self, worker: Worker | None, keep: bool) -> None:
        with self._cond:
            if worker is not None and keep and not self._closed:
                self._idle.append(worker)
            else:
                keep = False
                self._live -= 1
                if worker is not None:
                    self._workers.discard(worker)
            self._cond.notify()
        if worker is not None and not keep:
            worker.kill()


def _kill_all(workers: set[Worker]) -> None:
    """The finalizer: every worker the pool still has, busy or idle, is killed."""
    for worker in list(workers):
        worker.kill()
    workers.clear()
