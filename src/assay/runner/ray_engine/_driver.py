"""The driver side of a Ray run: build the pipeline, write each graded batch as it arrives.

The pipeline is read -> ``map_batches(GradingActor)`` -> the driver. Ray Data streams it: a
block is read, graded and handed back while later ones are still being read, and its
back-pressure bounds the blocks in flight, so the driver's memory does not grow with the
dataset. The driver keeps the running summary, the first few problems and the ids it has
been sent (a repeated id is refused before its line is written).
"""

from __future__ import annotations

import logging
import os
import pickle
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from time import perf_counter

from assay.core.aggregate import SampleVerdict, SuiteSummary
from assay.core.errors import AssayError, SpecError
from assay.runner.ray_engine._judge import start_judge_actor, stop_judge_actor, uses_judges
from assay.runner.ray_engine._source import Source, SuiteRef, read_blocks
from assay.runner.ray_engine._summary import PartialSummary
from assay.runner.ray_engine._worker import PROBLEMS_KEPT, GradingActor
from assay.runner.results import JsonlSink
from assay.runner.sizing import CODE_BATCH_ROWS, batch_sizes
from assay.runner.suites import Suite
from assay.settings import Settings

READ_CPUS = 0.25
"""CPUs a read task asks of Ray."""


@dataclass(slots=True)
class RayRun:
    """What a Ray run reports: the summary of what it graded, the first problems, the time."""

    part: PartialSummary = field(default_factory=PartialSummary)
    """The summary with its sums, to add to an earlier run's (``--resume``)."""
    problems: list[SampleVerdict] = field(default_factory=list)
    graded: int = 0
    duration_s: float = 0.0

    @property
    def summary(self) -> SuiteSummary:
        return self.part.summary


class LineSink(JsonlSink):
    """``JsonlSink`` fed with results lines already made by ``verdict_line`` on a worker:
    the same file, the same append, flush and fsync per batch, so ``--resume`` reads it."""

    def write_lines(self, data: bytes) -> None:
        if not data:
            return
        try:
            self._fh.write(data)
            self._fh.flush()
            if self._durable:
                os.fsync(self._fh.fileno())
        except OSError as exc:
            raise AssayError(f"cannot write results to {self.path}: {exc.strerror or exc} "
                             "(the lines written before are kept; fix this and use --resume)") from None


def batch_rows(suite: Suite) -> int:
    """Rows per Ray task for ``suite`` (``runner.sizing`` decides)."""
    return batch_sizes(suite.all_graders()).ray_rows


def grade_on_ray(ref: SuiteRef, suite: Suite, source: Source, *, settings: Settings, sink: LineSink | None = None,
                 fingerprint: str | None = None, done_ids: Collection[str] = (), concurrency: int = 8,
                 batch_size: int | None = None, workers: int | None = None, judge_cache_reads: bool = True,
                 on_progress: Callable[[int], None] | None = None) -> RayRun:
    """Grade ``suite`` (opened from ``ref``, its samples from ``source``) on the Ray that is
    initialised; write each batch's lines to ``sink`` as it arrives; skip samples whose id is in
    ``done_ids``. Each worker opens ``ref`` itself (compiled graders do not pickle)."""
    import ray
    import ray.data

    start = perf_counter()
    _quiet_data()
    done_ref = ray.put(frozenset(done_ids)) if done_ids else None
    cpus = float(ray.available_resources().get("CPU", 1.0))
    actors = workers or max(1, int(cpus))
    # An actor per CPU grades; one logical CPU and a read's share are left to Ray Data's own
    # tasks (listing files, the repartition, each asks for a whole one while reads hold theirs),
    # which are cheap beside grading: held by the actors, they would wait for ever.
    actor_cpus = min(1.0, max(0.0, cpus - 1.0 - READ_CPUS) / actors)
    judge = start_judge_actor(settings, judge_cache_reads) if uses_judges(suite) else None
    worker_args = {"suite": ref, "settings": settings, "fingerprint": fingerprint, "done": done_ref,
                   "concurrency": concurrency, "judge_cache_reads": judge_cache_reads, "judge": judge}
    rows = batch_size or batch_rows(suite)
    blocks = read_blocks(source, suite, num_cpus=READ_CPUS)
    if rows <= CODE_BATCH_ROWS:
        # Blocks of one batch each (a streaming repartition): a file read as one block would go
        # to one worker whole, and I/O-bound grading wants every worker busy. (For pure graders
        # the extra operator cost more than it spread: 27 s against 21 s for 200,000 rows.)
        blocks = blocks.repartition(target_num_rows_per_block=rows)
    graded = blocks.map_batches(
        GradingActor, batch_size=rows, batch_format="pyarrow",
        compute=ray.data.ActorPoolStrategy(size=actors), num_cpus=actor_cpus, fn_constructor_kwargs=worker_args)
    run = RayRun()
    seen: set[str] = set()
    try:
        for block in graded.iter_batches(batch_size=None, batch_format="pyarrow"):
            for row in block.to_pylist():
                _check_unique(row["ids"], seen, source)
                if sink is not None:
                    sink.write_lines(row["lines"])
                run.part.add(pickle.loads(row["summary"]))
                if len(run.problems) < PROBLEMS_KEPT:
                    run.problems.extend(pickle.loads(row["problems"])[:PROBLEMS_KEPT - len(run.problems)])
                run.graded += row["count"]
                if on_progress is not None:
                    on_progress(row["count"])
    except Exception as exc:  # noqa: BLE001  a worker's own error, unwrapped from Ray's
        raise _cause(exc) from None
    finally:
        if judge is not None:
            stop_judge_actor(judge)
    run.duration_s = perf_counter() - start
    return run


def _check_unique(ids: list[str], seen: set[str], source: Source) -> None:
    """Refuse a batch holding an id an earlier batch had, before its lines are written.

    The local engine refuses a repeated id when it loads the dataset; here rows are read in
    blocks apart, and a batch checks only its own rows, so the driver keeps every id it has been
    sent (tens of bytes each). The results written before stay, for ``--resume`` once the ids
    are made unique."""
    for sample_id in ids:
        if sample_id in seen:
            raise SpecError(f"duplicate sample id {sample_id!r}: it is on more than one row; ids must be unique "
                            "(the results written so far are kept: fix the ids and use --resume)",
                            where=source.where)
    seen.update(ids)


def _quiet_data() -> None:
    """No progress bars or per-operator logs from Ray Data on the CLI's terminal."""
    import ray.data

    ctx = ray.data.DataContext.get_current()
    ctx.enable_progress_bars = False
    ctx.print_on_execution_start = False
    ctx.enable_auto_log_stats = False
    for name in ("ray.data", "ray"):
        logging.getLogger(name).setLevel(logging.WARNING)


def _cause(exc: BaseException) -> BaseException:
    """The AssayError a worker raised, out of the wrappers Ray puts around it; else ``exc``."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if isinstance(current, AssayError):
            return current
        seen.add(id(current))
        current = getattr(current, "cause", None) or current.__cause__ or current.__context__
    return exc
