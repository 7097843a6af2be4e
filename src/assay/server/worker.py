"""Task runs graded in the background, one run at a time, by one process of the database.

A run grades evaluator by evaluator, in chunks of samples; each chunk's results are
committed together, skipping (run, sample, evaluator) triples already stored. A server that
stops or crashes mid-run leaves the run ``running``; at the next start ``resume_all`` queues
it again and it grades only what has no result yet, so nothing is lost or stored twice.

With several processes (``assay serve --workers N``) only the holder of the ``RunLease``
grades. A run started through another process is only stored ``queued``: the holder finds it
at its next poll (every ``poll_s``), as it finds runs left by a holder that died. A cancel is
written to the run's row, which the grading process reads between chunks.
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from assay.core.errors import SpecError
from assay.core.result import ErrorCode, GraderResult, Status
from assay.core.sample import Sample
from assay.runner.execute import grade_many
from assay.runner.sizing import PURE_CHUNK, batch_sizes
from assay.server.coordination import RunLease
from assay.server.grading import Grading
from assay.server.run_summary import summarise
from assay.store import runs as run_rows
from assay.store import tasks as task_rows
from assay.store.db import Database
from assay.store.models import RunState

log = logging.getLogger("assay.server.runs")


class RunWorker:
    """Grades queued runs on one background thread; I/O-bound graders fan out on a pool."""

    def __init__(self, database: Database, grading: Grading, concurrency: int = 8, *,
                 lease: RunLease | None = None, poll_s: float = 1.0) -> None:
        self.database = database
        self.grading = grading
        self.lease = lease if lease is not None else RunLease(None)
        self.poll_s = poll_s
        self._runs = ThreadPoolExecutor(max_workers=1, thread_name_prefix="assay-run")
        self._pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="assay-grade")
        self._stopping = threading.Event()
        self._cancelled: set[str] = set()
        self._active: set[str] = set()
        self._active_lock = threading.Lock()
        self._poller: threading.Thread | None = None

    def start(self) -> list[str]:
        """Resume interrupted runs (when this process holds the lease) and start polling for
        runs queued elsewhere; returns the ids resumed now."""
        resumed = self.resume_all()
        self._poller = threading.Thread(target=self._poll, name="assay-run-poll", daemon=True)
        self._poller.start()
        return resumed

    def submit(self, run_id: str) -> bool:
        """Grade a queued run here if this process holds the lease (else the holder's poll
        will); False when it is not graded here or is already under way."""
        if self._stopping.is_set() or not self.lease.held:
            return False
        with self._active_lock:
            if run_id in self._active:
                return False
            self._active.add(run_id)
        self._runs.submit(self._guarded, run_id)
        return True

    def resume_all(self) -> list[str]:
        """Queue every run left queued or running (by a stop, a crash, or another process)
        that is not under way here; returns their ids. Only the lease holder does."""
        if self._stopping.is_set() or not self.lease.acquire():
            return []
        with self.database.session() as session:
            ids = run_rows.active_run_ids(session)
        return [run_id for run_id in ids if self.submit(run_id)]

    def cancel(self, run_id: str) -> None:
        """Stop a run after its current chunk (the caller has marked it ``cancelled``)."""
        self._cancelled.add(run_id)

    def close(self) -> None:
        """Stop after the current chunk; an unfinished run stays ``running``, to be resumed."""
        self._stopping.set()
        if self._poller is not None:
            self._poller.join(timeout=10)
        self._runs.shutdown(wait=True, cancel_futures=True)
        self._pool.shutdown(wait=True, cancel_futures=True)
        self.lease.release()

    def _poll(self) -> None:
        while not self._stopping.wait(self.poll_s):
            try:
                self.resume_all()
            except Exception:  # noqa: BLE001  the database may be away for a moment: try again
                log.warning("looking for queued runs failed", exc_info=True)

    def _stopped(self, run_id: str) -> bool:
        """True when the server stops or the run was cancelled (here or in another process)."""
        if self._stopping.is_set():
            return True
        if run_id in self._cancelled:
            self._cancelled.discard(run_id)
            return True
        with self.database.session() as session:
            run = run_rows.get_run(session, run_id)
            return run is None or run.status != RunState.RUNNING

    def _guarded(self, run_id: str) -> None:
        try:
            self._execute(run_id)
        except Exception as exc:  # noqa: BLE001  a run that cannot go on is marked failed, never lost silently
            log.exception("run %s failed", run_id)
            with self.database.session() as session:
                run_rows.set_status(session, run_id, RunState.FAILED, error=f"{type(exc).__name__}: {exc}"[:2000],
                                    only_from=run_rows.ACTIVE)
        finally:
            with self._active_lock:
                self._active.discard(run_id)

    def _execute(self, run_id: str) -> None:
        with self.database.session() as session:
            run = run_rows.get_run(session, run_id)
            if run is None or run.status not in run_rows.ACTIVE:
                return
            task = task_rows.get_task(session, run.task_id)
            rows = list(task.dataset) if task is not None else []
            snapshot = list(run.evaluators)
            if not run_rows.set_status(session, run_id, RunState.RUNNING, only_from=run_rows.ACTIVE):
                return  # cancelled since it was read
        samples = [Sample.model_validate(row) for row in rows]
        index = {s.id: i for i, s in enumerate(samples)}
        for spec in snapshot:
            if not self._grade_evaluator(run_id, spec, samples, index):
                return
        with self.database.session() as session:
            weights = {spec["evaluatorId"]: spec["weight"] for spec in snapshot}
            run_rows.set_done(session, run_id, run_rows.count_results(session, run_id))
            # not if it was cancelled during the last chunk
            run_rows.set_status(session, run_id, RunState.COMPLETED, summary=summarise(session, run_id, weights),
                                only_from=(RunState.RUNNING,))

    def _grade_evaluator(self, run_id: str, spec: dict[str, Any], samples: list[Sample],
                         index: dict[str, int]) -> bool:
        """Grade what is left for one evaluator; False when the run was stopped or cancelled."""
        with self.database.session() as session:
            graded = run_rows.graded_sample_ids(session, run_id, spec["evaluatorId"])
        todo = [s for s in samples if s.id not in graded]
        grader, problem, size = None, "", PURE_CHUNK
        try:
            compiled = self.grading.compile_stored(spec["type"], spec["config"], spec["name"], spec["weight"])
            grader, size = compiled.build(self.grading.resources), batch_sizes([compiled]).first
        except SpecError as exc:  # e.g. the operator lowered a limit since: each sample says so
            problem = str(exc)
        for start in range(0, len(todo), size):
            if self._stopped(run_id):
                return False
            chunk = todo[start:start + size]
            if grader is None:
                results = [_config_error(spec, problem) for _ in chunk]
            else:
                results = grade_many(grader, chunk, pool=self._pool)
            rows = [_row(run_id, spec, sample, index[sample.id], result) for sample, result in zip(chunk, results)]
            with self.database.session() as session:
                run_rows.add_results(session, rows)
                run_rows.set_done(session, run_id, run_rows.count_results(session, run_id))
        return True


def _config_error(spec: dict[str, Any], problem: str) -> GraderResult:
    return GraderResult(name=spec["name"], type=spec["type"], status=Status.ERROR, passed=False,
                        reason=f"the evaluator's config is no longer valid: {problem}",
                        error=ErrorCode.INVALID_CONFIG, weight=spec["weight"])


def _row(run_id: str, spec: dict[str, Any], sample: Sample, position: int, result: GraderResult) -> dict[str, Any]:
    return {"run_id": run_id, "sample_id": sample.id, "sample_index": position,
            "evaluator_id": spec["evaluatorId"], "evaluator_name": spec["name"], "status": str(result.status),
            "passed": result.passed, "score": result.score, "reason": result.reason,
            "details": result.details, "error_code": None if result.error is None else str(result.error),
            "latency_ms": result.latency_ms}
