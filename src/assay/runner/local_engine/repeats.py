"""Repeats: grade each sample K times (``repeats:`` in the suite, ``assay run --repeats K``).

Attempt n of sample ``s1`` is the sample ``s1#r<n>``, in the cluster ``s1``: intervals cluster
by it, ``assay compare`` pairs by it, and reports show pass@k, pass^k and each grader's
self-agreement. Attempts are graded pass by pass, so one attempt of every sample is written
before the next begins. The judge cache serves only the first attempt: the others ask the
judge afresh (a repeat must be a new call). Samples that already share a task (waza trials,
Vally trajectories) keep that task as their cluster.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Collection, Iterator
from typing import Any

from assay.core.aggregate import SampleVerdict, summarize
from assay.core.interfaces import Resources
from assay.runner.ids import IdIndex
from assay.runner.local_engine.run import RunResult, run_suite
from assay.runner.suites import Suite

Sink = Callable[[list[SampleVerdict]], None]


def attempt_id(sample_id: str, attempt: int) -> str:
    return f"{sample_id}#r{attempt}"


def sample_ids(suite: Suite) -> set[str]:
    """Every id a results file of ``suite`` may hold (each attempt's, with repeats)."""
    if suite.repeats <= 1:
        return {s.id for s in suite.samples}
    return {attempt_id(s.id, n) for s in suite.samples for n in range(1, suite.repeats + 1)}


def attempts(suite: Suite) -> Iterator[Suite]:
    """The suite of each attempt, made one at a time (one copy of the samples alive)."""
    if suite.repeats <= 1:
        yield suite
        return
    for n in range(1, suite.repeats + 1):
        ids = {s.id: attempt_id(s.id, n) for s in suite.samples}
        yield dataclasses.replace(
            suite, samples=[s.model_copy(update={"id": ids[s.id]}) for s in suite.samples],
            sample_graders={ids[k]: v for k, v in suite.sample_graders.items() if k in ids},
            clusters={ids[s.id]: suite.clusters.get(s.id, s.id) for s in suite.samples}, repeats=1)


def _clustering(clusters: dict[str, str], sink: Sink | None) -> Sink:
    """A sink that stamps each verdict with its cluster before passing it on."""
    def stamp(verdicts: list[SampleVerdict]) -> None:
        for v in verdicts:
            v.cluster = clusters.get(v.id)
        if sink is not None:
            sink(verdicts)
    return stamp


def run_attempts(suite: Suite, *, resources: Resources, fresh: Callable[[], Resources],
                 done_ids: Collection[str] | IdIndex = (), sink: Sink | None = None, **options: Any) -> RunResult:
    """``run_suite`` over every attempt of ``suite`` (see the module): the first with
    ``resources``, the others with ``fresh()`` ones whose judge client reads no cache. The
    verdicts carry their cluster, before ``sink`` sees them."""
    verdicts: list[SampleVerdict] = []
    duration = 0.0
    resumed = 0
    later: Resources | None = None
    for n, attempt in enumerate(attempts(suite), 1):
        if n > 1 and later is None:
            later = fresh()
        chunk_sink = _clustering(attempt.clusters, sink) if attempt.clusters else sink
        result = run_suite(attempt, resources=resources if n == 1 else later, done_ids=done_ids, sink=chunk_sink,
                           **options)
        verdicts += result.verdicts
        duration += result.duration_s
        resumed += result.resumed
    summary = result.summary if suite.repeats <= 1 else summarize(verdicts, pass_k=suite.pass_at)
    return RunResult(suite, verdicts, summary, duration, resumed=resumed)
