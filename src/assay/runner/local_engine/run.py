"""Grade a loaded suite: every sample with every grader that applies to it.

Samples are graded in chunks; each finished chunk is handed to ``sink`` at once, so a run
that dies keeps every verdict written so far, and ``done_ids`` lets a resumed run skip them
without grading anything twice.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from itertools import islice
from time import perf_counter

from assay.core.aggregate import SampleVerdict, SuiteSummary, judge_columns, judge_sample, summarize
from assay.core.grader import Grader
from assay.core.interfaces import Resources
from assay.core.result import GraderResult, Status
from assay.core.sample import Sample
from assay.core.spec import CompiledSpec
from assay.runner.columnar import MIN_ROWS as COLUMNAR_MIN_ROWS
from assay.runner.columnar import takes as columnar_takes
from assay.runner.execute import grade_many
from assay.runner.ids import IdIndex
from assay.runner.resources import default_resources
from assay.runner.sizing import Pacer
from assay.runner.suites import Suite

COST_RANK = {"free": 0, "low": 1, "medium": 2, "high": 3}
CHUNK_SECONDS = 1.0
"""About how long a chunk that may grow takes (``sizing.Pacer``): the results file of a slow suite
still advances every second or so."""


@dataclass(slots=True)
class RunResult:
    suite: Suite
    verdicts: list[SampleVerdict]
    """Empty when the run was asked not to keep them (``keep_verdicts=False``)."""
    summary: SuiteSummary | None
    """None when the verdicts were not kept: the ``sink`` has seen them all."""
    duration_s: float
    resumed: int = 0


def run_suite(suite: Suite, *, resources: Resources | None = None, concurrency: int = 8,
              chunk_size: int = 1000, max_chunk: int | None = None, done_ids: Collection[str] | IdIndex = (),
              sink: Callable[[list[SampleVerdict]], None] | None = None,
              on_progress: Callable[[int], None] | None = None, columnar: bool = True,
              samples: Iterable[Sample] | None = None, keep_verdicts: bool = True) -> RunResult:
    """Grade ``suite``; verdicts come back in dataset order (resumed samples excluded).

    ``samples`` (the suite's own when None) may be read as they are graded (a
    ``local_engine.stream.DatasetStream``): with ``keep_verdicts=False`` nothing of a chunk outlives
    it but what ``sink`` keeps, so memory does not grow with the dataset. ``done_ids`` are the
    samples a resumed run skips.

    With ``columnar`` (the default), a suite whose graders all have columnar kernels is graded
    column by column (``runner.columnar``; needs pyarrow), with the same verdicts, once it has
    enough samples to repay importing pyarrow (``COLUMNAR_MIN_ROWS``).

    ``max_chunk``: chunks start at ``chunk_size`` samples and grow, up to ``max_chunk``, while
    the chunks are graded quickly, each sized to take about ``CHUNK_SECONDS`` at the speed
    measured so far (``sizing.Pacer``): large chunks for fast graders (the sandbox's batches),
    while the results file of a slow suite still advances every second or so."""
    start = perf_counter()
    resources = resources or default_resources()
    source = iter(suite.samples if samples is None else samples)
    # Enough samples read ahead to tell whether the columnar path pays.
    ahead, skipped = _todo(list(islice(source, COLUMNAR_MIN_ROWS)), done_ids)
    built: dict[int, Grader] = {}

    def grader_for(spec: CompiledSpec) -> Grader:
        g = built.get(id(spec))
        if g is None:
            g = built[id(spec)] = spec.build(resources)
        return g

    grade_chunk = _grade_chunk
    if columnar and len(ahead) + skipped >= COLUMNAR_MIN_ROWS and columnar_takes(suite):
        from assay.runner.columnar.run import grade_chunk
    verdicts: list[SampleVerdict] = []
    with ThreadPoolExecutor(max_workers=max(1, concurrency), thread_name_prefix="assay-grade") as pool:
        pace = Pacer(CHUNK_SECONDS, first=chunk_size, largest=max_chunk or chunk_size, smallest=chunk_size)
        while True:
            size = pace.size
            if len(ahead) < size:
                more, n = _todo(list(islice(source, size - len(ahead))), done_ids)
                skipped += n
                ahead += more
                if not more and n:
                    continue  # a run of resumed samples: read on
            chunk, ahead = ahead[:size], ahead[size:]
            if not chunk:
                break
            began = perf_counter()
            graded = grade_chunk(suite, chunk, grader_for, pool)
            pace.observe(len(chunk), perf_counter() - began)
            if sink is not None:
                sink(graded)
            if keep_verdicts:
                verdicts.extend(graded)
            if on_progress is not None:
                on_progress(len(chunk))
    return RunResult(suite, verdicts, summarize(verdicts) if keep_verdicts else None, perf_counter() - start,
                     resumed=skipped)


def _todo(samples: list[Sample], done_ids: Collection[str] | IdIndex) -> tuple[list[Sample], int]:
    """The samples still to grade, and how many were done before."""
    if not done_ids or not samples:
        return samples, 0
    if isinstance(done_ids, IdIndex):
        todo = [s for s, done in zip(samples, done_ids.contains([s.id for s in samples])) if not done]
    else:
        todo = [s for s in samples if s.id not in done_ids]
    return todo, len(samples) - len(todo)


def _grade_chunk(suite: Suite, chunk: list[Sample], grader_for: Callable[[CompiledSpec], Grader],
                 pool: ThreadPoolExecutor) -> list[SampleVerdict]:
    if not suite.cost_ordered and not any(s.id in suite.sample_graders for s in chunk):
        # Every sample of the chunk has the suite's graders and each runs on all of them: a
        # column of results per grader, zipped into verdicts (no per-sample bookkeeping).
        columns = [grade_many(grader_for(spec), chunk, pool=pool) for spec in suite.graders]
        return judge_columns((s.id for s in chunk), columns, threshold=suite.threshold)
    plans = {s.id: suite.graders_for(s.id) for s in chunk}
    results: dict[str, dict[int, GraderResult]] = {s.id: {} for s in chunk}
    decided: set[str] = set()
    ranks: Sequence[int | None] = [None]  # None: every grader at once
    if suite.cost_ordered:
        ranks = sorted({_rank(spec) for specs in plans.values() for spec in specs})
    for rank in ranks:
        work: dict[int, tuple[CompiledSpec, list[Sample]]] = {}
        for s in chunk:
            if s.id in decided:
                continue
            for spec in plans[s.id]:
                if rank is None or _rank(spec) == rank:
                    work.setdefault(id(spec), (spec, []))[1].append(s)
        for key, (spec, samples) in work.items():
            for s, r in zip(samples, grade_many(grader_for(spec), samples, pool=pool)):
                results[s.id][key] = r
        if rank is not None:
            decided.update(s.id for s in chunk if _cannot_pass(plans[s.id], results[s.id], suite.threshold))
    out = []
    for s in chunk:
        got = results[s.id]
        ordered = [got[id(spec)] for spec in plans[s.id] if id(spec) in got]
        verdict = judge_sample(s.id, ordered, threshold=suite.threshold)
        verdict.skipped = [spec.name for spec in plans[s.id] if id(spec) not in got]
        out.append(verdict)
    return out


def _cannot_pass(plan: list[CompiledSpec], got: dict[int, GraderResult], threshold: float | None) -> bool:
    """True once no outcome of the graders still to run can make the sample pass: a grader
    failed (no threshold), or even perfect scores from the rest stay below the threshold."""
    if threshold is None:
        return any(r.status is Status.FAILED for r in got.values())
    total = weights = 0.0
    for spec in plan:
        r = got.get(id(spec))
        if r is None:
            total += spec.weight
            weights += spec.weight
        elif r.score is not None and r.scored:
            total += r.score * r.weight
            weights += r.weight
    return weights > 0 and total / weights < threshold


def _rank(spec: CompiledSpec) -> int:
    return COST_RANK.get(spec.taxonomy.cost, 1)
