"""Task runs and online rules' jobs graded from the run queue in the database
(``assay.store.queue``), by every server of the database at once.

Each server runs ``run_slots`` slot threads. A slot claims the next slice (users in turn, a
run's slice or an online slice of one user's due jobs), grades it (``service.slices``, or
``service.online.grader``) and claims again; when the queue is empty it waits
``queue_poll_ms``, or less when a run is started here. A heartbeat thread renews this
server's leases every third of ``run_lease_s``; a lease it finds taken over (this server was
stalled past it) stops the slot grading that slice. A server killed mid-slice leaves its
leases to expire, and another server takes the slice over and grades only what has no result
yet; a server that stops cleanly gives its slices back at once, without waiting for the
evaluations in flight: the server kills them (``server.service``), stores none of their answers,
and the next start (of any server) grades those samples again.

A cancel is written to the run's row, which every slot grading the run reads between chunks.
A run that cannot go on is marked ``failed``. The database away for a while (a restart, a
failover, SQLite locked) is no reason to fail a run (``store.outage``): a slot that meets it
leaves the run as it is, waits with a growing pause until the database answers, gives the slice
back and claims again; what was committed stays, and the unique results make a slice graded
again store each result once. No thread of the worker ends before ``close``: ``problem()``
says why this server cannot grade (``/ready`` answers 503 with it). A run whose slices are all done but which is still
active (its last server died between the two commits) is finished by the next server's start
or heartbeat.
"""

from __future__ import annotations

import logging
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from typing import TYPE_CHECKING

from assay.service.failures import public_failure
from assay.service.grading import Grading
from assay.service.metrics import Metrics
from assay.service.slices import SliceGrader
from assay.settings import Settings
from assay.store import online_queue, queue
from assay.store import runs as run_rows
from assay.store import tasks as task_rows
from assay.store.db import Database
from assay.store.models import ACTIVE_STATES, RunState, utcnow
from assay.store.outage import Backoff, DatabaseHealth
from assay.store.queue import Claim, OnlineClaim
from assay.store.snapshot import RunEvaluator

if TYPE_CHECKING:
    from assay.service.online.grader import OnlineGrader

log = logging.getLogger("assay.server.runs")
SERVED_MEMORY_S = 600
"""How long a done online slice is kept: the queue reads when a user was last served from it."""


class RunWorker:
    """This server's share of the run queue."""

    def __init__(self, database: Database, grading: Grading, settings: Settings,
                 metrics: Metrics | None = None, health: DatabaseHealth | None = None,
                 online: OnlineGrader | None = None) -> None:
        self.database = database
        self.online = online
        """Grades the online slices the slots lease; None: this worker claims only task runs' slices."""
        self.health = health or DatabaseHealth()
        self.settings = settings
        self.metrics = metrics
        self.holder = f"{socket.gethostname()[:60]}:{os.getpid()}:{uuid.uuid4().hex[:12]}"
        """This server in the queue's ``holder`` column."""
        self.lease_s = float(settings.run_lease_s)
        self.poll_s = settings.queue_poll_ms / 1000
        self._pool = ThreadPoolExecutor(max_workers=settings.run_concurrency, thread_name_prefix="assay-grade")
        self._stopping = threading.Event()
        self.slices = SliceGrader(database, grading, self._pool, settings.run_concurrency,
                                  halted=self._stopping.is_set)
        self._wake = threading.Event()
        self._lock = threading.Lock()
        self._held: dict[int, Claim | OnlineClaim] = {}
        self._lost: set[int] = set()
        self._cancelled: set[str] = set()
        self._threads: list[threading.Thread] = []

    def start(self) -> list[str]:
        """Cut runs queued before the queue existed into slices, then start the slots and the
        heartbeat; returns the ids of the runs waiting in the queue now."""
        with self.database.session() as session:
            for run in queue.unplanned_runs(session):
                if run.dataset_version_id is None:  # queued before runs named a version: the task's now
                    task = task_rows.get_task(session, run.task_id)
                    version = task_rows.graded_versions(session, [task]).get(run.task_id) if task else None
                    run.dataset_version_id = version.id if version is not None else None
                snapshot = run.snapshot
                samples = max(1, run.total // max(1, len(snapshot)))  # one slice at least: it ends the run
                queue.plan(session, run.id, run.created_by_id, samples, self.slice_size(snapshot))
            waiting = run_rows.active_run_ids(session)
        self._finish_orphans()
        for n in range(self.settings.run_slots):
            self._spawn(self._slot, f"assay-run-slot-{n}")
        self._spawn(self._heartbeat, "assay-run-heartbeat")
        return waiting

    def slice_size(self, specs: Sequence[RunEvaluator]) -> int:
        """Samples per slice of a run graded by ``specs`` (a run's snapshot): ``ASSAY_RUN_SLICE_SIZE``
        when set, else what ``runner.sizing`` decides for these graders."""
        if self.settings.run_slice_size:
            return self.settings.run_slice_size
        return self.slices.sizes(specs).first

    def submit(self, run_id: str) -> None:
        """A run was queued here: wake an idle slot rather than wait for its poll."""
        self.wake()

    def wake(self) -> None:
        """Work was queued here (a run, online jobs): wake an idle slot rather than wait for its poll."""
        self._wake.set()

    def cancel(self, run_id: str) -> None:
        """Stop grading a run after the current chunk (the caller has marked it ``cancelled``)."""
        with self._lock:
            self._cancelled.add(run_id)

    def halt(self) -> None:
        """Grade nothing more and store nothing more: what the sandbox answers from now on (its
        processes killed by the server's stop; on Ray, the run actors killed here) is not
        stored, and the slices go back to the queue at ``close``, to be graded again."""
        self._stopping.set()
        self._wake.set()
        self.slices.halt()  # on Ray: its actors killed now, with the evaluations in flight

    def close(self) -> None:
        """Stop after the current chunks (at once after ``halt`` and the sandbox's close) and
        give the unfinished slices back to the queue."""
        self.halt()
        for thread in self._threads:
            thread.join(timeout=30)
        with self._lock:
            held = list(self._held)
        if held:
            try:
                with self.database.session() as session:
                    queue.give_back(session, self.holder, held)
            except Exception:  # noqa: BLE001  the database is away: the leases expire instead
                log.warning("giving %d slice(s) back at the stop failed; their leases expire within %.0f s",
                            len(held), self.lease_s, exc_info=True)
        self._pool.shutdown(wait=True, cancel_futures=True)
        self.slices.close()

    def problem(self) -> str | None:
        """Why this server cannot grade now (a thread of the worker ended, the database is away),
        or None."""
        if self._threads and not self._stopping.is_set():
            dead = [thread.name for thread in self._threads if not thread.is_alive()]
            if dead:
                return f"grading thread(s) {', '.join(dead)} stopped: restart this server (the log says why)"
        return self.health.reason()

    def _spawn(self, target: Callable[[], object], name: str) -> None:
        thread = threading.Thread(target=self._forever, args=(target, name), name=name, daemon=True)
        thread.start()
        self._threads.append(thread)

    def _forever(self, target: Callable[[], object], name: str) -> None:
        """``target`` again after anything it raises (logged), until the worker stops: a thread
        of the worker never ends on an error."""
        while not self._stopping.is_set():
            try:
                target()
            except Exception:  # noqa: BLE001  logged; the thread goes on
                log.exception("%s met an unexpected error; it goes on", name)
                self._stopping.wait(1.0)

    def _slot(self) -> None:
        backoff = Backoff()
        while not self._stopping.is_set():
            try:
                with self.database.session() as session:
                    claim = queue.claim(session, self.holder, self.lease_s, online=self.online is not None)
                self.health.succeeded()
                backoff.reset()
            except Exception as exc:  # noqa: BLE001  the database may be away for a moment: try again
                if not self.health.failed(f"{threading.current_thread().name} claiming a slice", exc):
                    log.warning("claiming a slice failed", exc_info=True)
                self._stopping.wait(backoff.pause())
                continue
            if claim is None:
                self._wake.wait(self.poll_s)
                self._wake.clear()
                continue
            self._grade(claim)

    def _grade(self, claim: Claim | OnlineClaim) -> None:
        with self._lock:
            self._held[claim.id] = claim
        finished = failed = False
        started = time.perf_counter()
        try:
            if isinstance(claim, OnlineClaim):
                assert self.online is not None  # claimed only with an online grader
                finished = self.online.grade(claim, lambda: self._stopped(claim), self._pool)
            else:
                finished = self.slices.grade(claim, lambda: self._stopped(claim))
                if finished and self.metrics is not None:
                    self.metrics.slice_seconds.observe(time.perf_counter() - started)
        except Exception as exc:  # noqa: BLE001  a run that cannot go on is marked failed, never lost silently
            where = (f"online slice {claim.id} ({claim.jobs} jobs of user {claim.user_id})"
                     if isinstance(claim, OnlineClaim) else f"run {claim.run_id} in samples {claim.start}-{claim.stop}")
            failed = not self.health.failed(f"{threading.current_thread().name} grading {where}", exc)
            if failed and isinstance(claim, Claim):
                self._fail(claim.run_id, exc, where)
            elif failed:  # no run to fail: its jobs are taken again once the lease passes
                log.exception("grading %s failed; it is taken again in %.0f s", where, self.lease_s)
        finally:
            self._release(claim.id, finished, give_back=not (failed and isinstance(claim, OnlineClaim)))

    def _release(self, slice_id: int, finished: bool, give_back: bool = True) -> None:
        """Forget a slice this slot graded; one not finished goes back to the queue (a stop
        leaves it to ``close``, which gives it back; a lost one is another server's now)."""
        with self._lock:
            lost = slice_id in self._lost
            self._lost.discard(slice_id)
            stopping = self._stopping.is_set()
            if finished or lost or not stopping:
                self._held.pop(slice_id, None)
        if give_back and not finished and not lost and not stopping:
            self._give_back(slice_id)

    def _fail(self, run_id: str, exc: Exception, where: str) -> None:
        """Mark the run failed for ``exc``, the write tried again while the database is away."""
        reason, error_id = public_failure(exc, log, where)

        def write() -> None:
            with self.database.session() as session:
                run_rows.set_status(session, run_id, RunState.FAILED, error=str(reason), error_id=error_id,
                                    only_from=ACTIVE_STATES)

        self.health.call(write, f"{threading.current_thread().name} failing run {run_id}", self._stopping)

    def _give_back(self, slice_id: int) -> None:
        """Return an unfinished slice to the queue, tried again while the database is away; a
        server that stops meanwhile leaves it to its lease's expiry."""

        def give_back() -> None:
            with self.database.session() as session:
                queue.give_back(session, self.holder, [slice_id])

        try:
            self.health.call(give_back, f"{threading.current_thread().name} giving slice {slice_id} back",
                             self._stopping)
        except Exception:  # noqa: BLE001  its lease expires anyway
            log.warning("giving slice %d back failed", slice_id, exc_info=True)

    def _stopped(self, claim: Claim | OnlineClaim) -> bool:
        """True when the server stops, the lease was lost, or (a run's slice) the run is no
        longer active."""
        if self._stopping.is_set():
            return True
        with self._lock:
            if claim.id in self._lost or isinstance(claim, OnlineClaim):
                return claim.id in self._lost
            if claim.run_id in self._cancelled:
                return True
        with self.database.session() as session:
            return run_rows.status_of(session, claim.run_id) not in ACTIVE_STATES

    def _finish_orphans(self) -> bool:
        """Finish the runs whose every slice is done but which are still active (a server died
        between its last slice and the run's end); any server may, once or twice. Then delete
        the online slices done more than ``SERVED_MEMORY_S`` ago."""
        try:
            with self.database.session() as session:
                orphans = [(run.id, run.snapshot) for run in queue.unfinished_runs(session)]
                online_queue.purge_done(session, utcnow() - timedelta(seconds=SERVED_MEMORY_S))
            for run_id, specs in orphans:
                log.info("finishing run %s, whose last slice's server stopped before the end", run_id)
                self.slices.finish_run(run_id, specs)
            return True
        except Exception as exc:  # noqa: BLE001  the next beat tries again
            if not self.health.failed("the heartbeat finishing runs left active", exc):
                log.warning("finishing runs left active failed", exc_info=True)
            return False

    def _heartbeat(self) -> None:
        """Every third of a lease: finish orphaned runs, renew this server's leases. While the
        database is away, beats come after growing pauses (never longer than the usual beat)."""
        beat, backoff = self.lease_s / 3, Backoff()
        wait = beat
        while not self._stopping.wait(wait):
            wait = beat
            finished = self._finish_orphans()
            if not self._renew() or not finished:  # both every beat: a run that cannot be finished stops no renewal
                wait = min(beat, backoff.pause())
                continue
            self.health.succeeded()
            backoff.reset()

    def _renew(self) -> bool:
        with self._lock:
            held = list(self._held)
        if not held:
            return True
        try:
            with self.database.session() as session:
                kept = queue.renew(session, self.holder, held, self.lease_s)
        except Exception as exc:  # noqa: BLE001  renewed at the next beat, within the lease
            if not self.health.failed("the heartbeat renewing leases", exc):
                log.warning("renewing leases failed", exc_info=True)
            return False
        with self._lock:
            self._lost.update(i for i in set(held) - kept if i in self._held)
        return True
