"""Grading one leased slice of a run: its rows, every evaluator of the run's snapshot, the
results committed chunk by chunk as they are graded (visible in the run's progress about twice a
second), then the slice marked done (and the run finished when it was
the last). What is already stored for the slice (a previous holder died half-way) is skipped,
and the insert ignores a result present anyway, so each (sample, evaluator) is stored once.

Both engines (the server's own sandbox, or Ray with ``ASSAY_RUN_ENGINE=ray``) keep a graded chunk
by one rule (``SliceGrader._keep``): nothing is stored once the server stops, and an evaluator
that times out on ``ASSAY_RUN_PAUSE_AFTER_TIMEOUTS`` samples in a row is paused in its run.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from sqlalchemy import select

from assay.core.errors import SpecError
from assay.core.grader import Grader
from assay.core.messages import Phrase
from assay.core.result import ErrorCode, GraderResult, Status
from assay.core.sample import Sample
from assay.runner.execute import grade_many
from assay.runner.sizing import BatchSizes, Pacer, batch_sizes
from assay.service.failures import failure_kind
from assay.service.fairness import acting_for
from assay.service.grading import Grading
from assay.service.run_compare import summarise_and_keep
from assay.store import datasets as dataset_rows
from assay.store import pauses, queue
from assay.store import runs as run_rows
from assay.store.db import Database
from assay.store.models import ACTIVE_STATES, RunSlice, RunState
from assay.store.queue import Claim
from assay.store.snapshot import RunEvaluator, result_row, weights

PROGRESS_SECONDS = 0.5
"""About how long the results of a slice wait before they are committed and counted in the
run's progress (one evaluation, when one takes longer)."""

if TYPE_CHECKING:
    from assay.service.ray_slices import RayGrading

Rows = Callable[[Any, str, int, int], list[dict[str, Any]]]
"""``(session, dataset version id, start, stop)`` -> the rows at those positions, in order."""


class SliceGrader:
    """Grades slices for one server: results through ``grading``'s resources, I/O fanned out on
    ``pool``. ``rows`` reads a slice's dataset rows from the version the run grades
    (``store.datasets.read_rows``)."""

    def __init__(self, database: Database, grading: Grading, pool: ThreadPoolExecutor, concurrency: int,
                 rows: Rows = dataset_rows.read_rows, halted: Callable[[], bool] = lambda: False) -> None:
        self.database = database
        self.halted = halted
        """True once the server stops: it kills the sandbox's processes in flight, whose answers
        (errors) are then not stored; the slice goes back to the queue and is graded again."""
        self.concurrency = concurrency
        self.engine = grading.settings.run_engine
        self._ray: RayGrading | None = None
        self._ray_lock = threading.Lock()
        self.grading = grading
        self.pool = pool
        self.rows = rows

    def grade(self, claim: Claim, stopped: Callable[[], bool]) -> bool:
        """Grade what the slice lacks; False when ``stopped`` said to stop before the end (the
        slice stays unfinished, to be given back). An exception fails the run (the worker
        marks it): it is counted here, by reason."""
        metrics = self.grading.metrics
        if metrics is not None:
            metrics.slices_leased.inc()
        try:
            return self._grade(claim, stopped)
        except Exception as exc:
            if metrics is not None:
                metrics.run_finished("failed", failure_kind(exc))
            raise

    def _grade(self, claim: Claim, stopped: Callable[[], bool]) -> bool:
        with self.database.session() as session:
            if self.grading.metrics is not None and (session.scalar(
                    select(RunSlice.attempts).where(RunSlice.id == claim.id)) or 0) > 1:
                self.grading.metrics.slices_retaken.inc()  # another server held it before
            run = run_rows.get_run(session, claim.run_id)
            if run is None or run.status not in ACTIVE_STATES:
                return False
            version_id = run.dataset_version_id
            rows = [] if version_id is None else self.rows(session, version_id, claim.start, claim.stop)
            graded = run_rows.graded_in_range(session, claim.run_id, claim.start, claim.stop)
            specs = run.snapshot
            held = {pause.evaluator_id for pause in pauses.paused(session, claim.run_id)}
        samples = [Sample.model_validate(row) for row in rows]
        local = specs
        if self.engine == "ray":
            if not self._grade_on_ray(claim, specs, samples, graded, held, stopped):
                return False
            local = []  # graded
        with acting_for(claim.user_id):
            for spec in local:
                if spec.evaluator_id in held:  # paused in this run: its samples wait for a resume
                    continue
                todo = [(claim.start + i, s) for i, s in enumerate(samples)
                        if (s.id, spec.evaluator_id) not in graded]
                if todo and not self._grade_evaluator(claim, spec, todo, stopped):
                    return False
        with self.database.session() as session:
            queue.finish(session, claim.id)
            last = queue.remaining(session, claim.run_id) == 0
        if last:
            self.finish_run(claim.run_id, specs)
        return True

    def _grade_on_ray(self, claim: Claim, specs: list[RunEvaluator], samples: list[Sample],
                      graded: set[tuple[str, str]], held: set[str], stopped: Callable[[], bool]) -> bool:
        """The slice's samples that lack a result, graded on Ray by the evaluators they lack
        (none paused in the run), in chunks paced as on the local path, the first no larger
        than the timeouts that pause an evaluator; each chunk kept by ``_keep``."""
        after = self.grading.settings.run_pause_after_timeouts
        todo = [(claim.start + i, s) for i, s in enumerate(samples)
                if any((s.id, spec.evaluator_id) not in graded for spec in specs if spec.evaluator_id not in held)]
        with self._ray_lock:  # every slot may get here first: one connection to Ray
            if todo and self._ray is None and not self.halted():
                from assay.service.ray_slices import RayGrading

                self._ray = RayGrading(self.grading.settings)
        by_id = {spec.evaluator_id: spec for spec in specs}
        index = {sample.id: position for position, sample in todo}
        pace = Pacer(PROGRESS_SECONDS, first=min(len(todo), self.concurrency, after or len(todo)), largest=len(todo))
        first = 0
        while first < len(todo):
            if stopped() or self._ray is None:
                return False
            if after:  # another slice may have paused one meanwhile
                held = held | self._paused(claim.run_id)
            chunk = [sample for _, sample in todo[first:first + pace.size]]
            first += len(chunk)
            only = frozenset(spec.evaluator_id for spec in specs if spec.evaluator_id not in held
                             and any((sample.id, spec.evaluator_id) not in graded for sample in chunk))
            if not only:  # what the chunk lacks is a paused evaluator's: it waits for a resume
                continue
            began = time.perf_counter()
            lines = self._ray.grade(claim.run_id, claim.user_id, specs, chunk, only)
            if lines is None:
                return False  # the server stops: its actors were killed with what they graded
            pace.observe(len(chunk), time.perf_counter() - began)
            paused = self._keep(claim.run_id, [
                result_row(claim.run_id, by_id[result["name"]], line["id"], index[line["id"]], result)
                for line in lines for result in line["results"] if (line["id"], result["name"]) not in graded])
            if paused is None:
                return False
            held = held | paused
        return True

    def _keep(self, run_id: str, rows: list[dict[str, Any]]) -> set[str] | None:
        """What both engines do with the result rows of a graded chunk. Once the server stops,
        nothing (None): the evaluations in flight were killed (the sandbox's processes, the Ray
        actors), their answers are errors of the stop, and the slice goes back to the queue to
        be graded again. Else the rows not stored yet are stored and counted, and an evaluator
        whose last result among them is a timeout is paused in the run when its last
        ``run_pause_after_timeouts`` results are (``store.pauses``). Returns the evaluators
        paused now."""
        if self.halted():
            return None
        after = self.grading.settings.run_pause_after_timeouts
        last = {row["evaluator_id"]: row["error_code"] for row in rows}  # each evaluator's last row
        with self.database.session() as session:
            self._stored(session, run_id, rows)
            return {evaluator_id for evaluator_id, code in last.items()
                    if after and code == ErrorCode.TIMEOUT.value and pauses.note_timeouts(
                        session, run_id, evaluator_id, after)}

    def _stored(self, session: Any, run_id: str, rows: list[dict[str, Any]]) -> None:
        """Insert result rows (those not stored yet), count them in the run's progress and in
        the metrics."""
        added = run_rows.add_results(session, rows)
        run_rows.add_done(session, run_id, added)
        if self.grading.metrics is not None:
            self.grading.metrics.results_stored.inc(added)

    def halt(self) -> None:
        """The server stops: on Ray, its actors are killed now with the evaluations in flight
        (``RayGrading.halt``); the local sandbox is killed by the server itself."""
        with self._ray_lock:
            if self._ray is not None:
                self._ray.halt()

    def close(self) -> None:
        if self._ray is not None:
            self._ray.close()

    def ray_in_flight(self) -> dict[str, int] | None:
        """The Ray cluster's code evaluations in flight per user, once this server graded there
        (None before: it has no connection to Ray)."""
        return None if self._ray is None else self._ray.in_flight()

    def sizes(self, specs: Sequence[RunEvaluator]) -> BatchSizes:
        """``runner.sizing``'s sizes for a run's evaluator specs (those that no longer compile
        count as pure: they are graded as config errors)."""
        compiled = []
        for spec in specs:
            try:
                compiled.append(self.grading.compile_stored(spec.type, spec.config, spec.name, spec.weight))
            except SpecError:
                continue
        return batch_sizes(compiled, self.concurrency)

    def finish_run(self, run_id: str, specs: Sequence[RunEvaluator]) -> None:
        """Every slice is done: the exact count, the summary (counted in SQL), ``completed``
        (unless it was cancelled meanwhile, or an evaluator of it is paused: the run waits for
        a resume or a cancel)."""
        with self.database.session() as session:
            run_rows.set_done(session, run_id, run_rows.count_results(session, run_id))
            if pauses.paused(session, run_id):
                return
            completed = run_rows.set_status(session, run_id, RunState.COMPLETED,
                                            summary=summarise_and_keep(session, run_id, weights(specs)),
                                            only_from=ACTIVE_STATES)
        if completed and self.grading.metrics is not None:
            self.grading.metrics.run_finished("completed")

    def _grade_evaluator(self, claim: Claim, spec: RunEvaluator, todo: list[tuple[int, Sample]],
                         stopped: Callable[[], bool]) -> bool:
        grader: Grader[Any] | None = None
        problem, pace = "", Pacer(PROGRESS_SECONDS, first=len(todo), largest=len(todo))
        try:
            compiled = self.grading.compile_stored(spec.type, spec.config, spec.name, spec.weight)
            grader = compiled.build(self.grading.resources)
            # A pure grader takes the slice in one call and one commit. One that waits on I/O goes
            # in chunks, each committed and counted in the run's progress as soon as it is graded:
            # a few samples first, then as many as take about PROGRESS_SECONDS at the speed seen,
            # so progress moves while slow evaluations go on, and a cancel or a stop waits for
            # one chunk at most. The first chunk is no larger than the timeouts that pause an
            # evaluator: a runaway one is paused after them, not after a whole chunk more.
            if compiled.traits.io_bound:
                step = batch_sizes([compiled], self.concurrency).first
                first = min(step, self.concurrency, self.grading.settings.run_pause_after_timeouts or step)
                pace = Pacer(PROGRESS_SECONDS, first=first, largest=step)
        except SpecError as exc:  # e.g. the operator lowered a limit since: each sample says so
            problem = exc.phrased()
        first, pause_after = 0, self.grading.settings.run_pause_after_timeouts
        while first < len(todo):
            if stopped():
                return False
            if pause_after and spec.evaluator_id in self._paused(claim.run_id):
                return True  # another slice paused it: what is left waits for a resume
            chunk = todo[first:first + pace.size]
            first += len(chunk)
            samples = [sample for _, sample in chunk]
            began = time.perf_counter()
            if grader is None:
                results = [config_error(spec, problem) for _ in chunk]
            else:
                results = grade_many(grader, samples, pool=self.pool)
            pace.observe(len(chunk), time.perf_counter() - began)
            paused = self._keep(claim.run_id, [result_row(claim.run_id, spec, sample.id, index, result)
                                               for (index, sample), result in zip(chunk, results, strict=True)])
            if paused is None:
                return False  # the server stops: what the killed sandbox answered is not stored
            if spec.evaluator_id in paused:
                return True  # the rest of its samples are not sent to the sandbox
        return True

    def _paused(self, run_id: str) -> set[str]:
        """The evaluators paused in the run."""
        with self.database.session() as session:
            return {pause.evaluator_id for pause in pauses.paused(session, run_id)}


STALE = Phrase("run.stale_config", "the evaluator's config is no longer valid: {problem}")


def config_error(spec: RunEvaluator, problem: str) -> GraderResult:
    said = STALE(problem=problem)
    return GraderResult(name=spec.name, type=spec.type, status=Status.ERROR, passed=False, reason=str(said),
                        reason_code=said.code, reason_args=said.args, error=ErrorCode.INVALID_CONFIG,
                        weight=spec.weight)
