"""A suite's summary, added up verdict by verdict: ``RunningSummary``.

A run folds each graded chunk into a ``RunningSummary`` and lets the verdicts go, so its
memory does not grow with the dataset's objects: what it keeps per sample is a few bytes per
grader (``Outcomes``), for the statistics that need more than counts (intervals, pass@k).
``summary()`` gives the ``SuiteSummary`` that ``summarize`` gives for the same verdicts, to
the last bit (the sums are taken in the same order).

Counts and means follow the engine's rules: errors and pending results are counted apart and
left out of pass rates and mean scores. Every mean score assay reports (the CLI, JSON, JUnit,
the service's API and pages, the Ray engine's) is ``mean_score`` of sums that ``in_mean`` chose.
"""

from __future__ import annotations

import math
from array import array
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from assay.core.intervals import Intervals, of_arrays, of_sums
from assay.core.result import Status

if TYPE_CHECKING:
    from assay.core.aggregate import SampleVerdict

PASSED, FAILED, ERROR = Status.PASSED, Status.FAILED, Status.ERROR


def in_mean(status: Status, score: float | None) -> bool:
    """Whether a result (or a sample's verdict) counts in a mean score: decided (passed or
    failed) and scored. An errored or pending one is out even when it carries a score (a
    sample whose other graders scored it), and so is a decided one without a score."""
    return (status is PASSED or status is FAILED) and score is not None


def mean_score(score_sum: float, scored: int) -> float | None:
    """The mean score from the sum and count of the scores ``in_mean`` let in; None when none."""
    return score_sum / scored if scored else None


@dataclass(slots=True)
class GraderSummary:
    name: str
    type: str
    weight: float | None
    """None for a grader that was skipped for every sample (never built, so unknown here)."""
    total: int = 0
    passed: int = 0
    failed: int = 0
    errors: int = 0
    pending: int = 0
    skipped: int = 0
    score_sum: float = 0.0
    error_codes: dict[str, int] = field(default_factory=dict)
    intervals: Intervals = field(default_factory=Intervals)
    """95% intervals of the pass rate and mean score (``core.intervals``)."""
    scored: int = 0
    """Results in the mean score (``in_mean``)."""

    @property
    def pass_rate(self) -> float | None:
        decided = self.passed + self.failed
        return self.passed / decided if decided else None

    @property
    def mean_score(self) -> float | None:
        return mean_score(self.score_sum, self.scored)

    def to_dict(self) -> dict:
        return {
            "name": self.name, "type": self.type, "weight": self.weight, "total": self.total,
            "passed": self.passed, "failed": self.failed, "errors": self.errors,
            "pending": self.pending, "skipped": self.skipped, "pass_rate": self.pass_rate,
            "mean_score": self.mean_score, "error_codes": self.error_codes, **self.intervals.to_dict(),
            "left_out": self.errors + self.pending,
        }


@dataclass(slots=True)
class SuiteSummary:
    total: int = 0
    passed: int = 0
    failed: int = 0
    errors: int = 0
    pending: int = 0
    graders: list[GraderSummary] = field(default_factory=list)
    intervals: Intervals = field(default_factory=Intervals)
    """95% intervals of the samples' pass rate and mean score."""
    score_sum: float = 0.0
    scored: int = 0
    """Samples in the mean score (``in_mean``: errored and pending samples are out)."""

    @property
    def mean_score(self) -> float | None:
        return mean_score(self.score_sum, self.scored)

    @property
    def all_passed(self) -> bool:
        return self.passed == self.total

    @property
    def pass_rate(self) -> float | None:
        """Passed over passed and failed samples: errors and pending ones are left out."""
        scored = self.passed + self.failed
        return self.passed / scored if scored else None

    def to_dict(self) -> dict:
        return {
            "total": self.total, "passed": self.passed, "failed": self.failed,
            "errors": self.errors, "pending": self.pending, "pass_rate": self.pass_rate,
            "mean_score": self.mean_score, **self.intervals.to_dict(), "left_out": self.errors + self.pending,
            "graders": [g.to_dict() for g in self.graders],
        }


_SUMS_IN_PYTHON = 50_000
"""Up to this many unclustered outcomes, intervals are summed in Python (under ~10 ms), which
spares a short run numpy's import; past it numpy sums faster than its import costs."""


@dataclass(slots=True)
class Outcomes:
    """The decided (passed or failed) outcomes of one grader, or of the samples' verdicts, in
    the order they were added: 9 bytes each (13 with clusters), no object per sample.

    ``passed[i]`` is 1 or 0; ``scores[i]`` the score, NaN when the result had none;
    ``clusters[i]`` the index of its cluster in ``RunningSummary.cluster_keys`` (None when the
    summary has no ``cluster_of``: every sample is then its own cluster). Errors and pending
    results are not here, as they are out of every rate and mean.
    """

    passed: bytearray = field(default_factory=bytearray)
    scores: array = field(default_factory=lambda: array("d"))
    clusters: array | None = None

    def __len__(self) -> int:
        return len(self.passed)

    def cluster_counts(self, n_clusters: int) -> tuple[array, array]:
        """Per cluster: how many outcomes passed, and how many were decided (``array('L')``
        each, indexed like ``RunningSummary.cluster_keys``). Needs clusters."""
        if self.clusters is None:
            raise ValueError("this summary has no clusters (give RunningSummary a cluster_of)")
        passed, decided = array("L", [0]) * n_clusters, array("L", [0]) * n_clusters
        for c, p in zip(self.clusters, self.passed):
            decided[c] += 1
            passed[c] += p
        return passed, decided

    def intervals(self, pass_k: int | None = None) -> Intervals:
        """The 95% intervals of these outcomes' pass rate and mean score (clustered when the
        outcomes have clusters and some cluster holds several; then pass@k too, with ``pass_k``
        as k)."""
        if not len(self.passed):
            return Intervals()
        if self.clusters is None and len(self.passed) <= _SUMS_IN_PYTHON:
            scores = [s for s in self.scores if not math.isnan(s)]  # a result without a score is out of the mean
            return of_sums(len(self.passed), sum(self.passed), len(scores), math.fsum(scores),
                           math.fsum(s * s for s in scores))
        import numpy as np

        clusters = None
        if self.clusters is not None:
            clusters = np.frombuffer(memoryview(self.clusters), dtype=f"u{self.clusters.itemsize}")
        return of_arrays(np.frombuffer(memoryview(self.passed), dtype=np.uint8),
                         np.frombuffer(memoryview(self.scores), dtype=np.float64), clusters, pass_k)

    def _add(self, passed: bool, score: float | None, cluster: int | None) -> None:
        self.passed.append(passed)
        self.scores.append(math.nan if score is None else score)
        if self.clusters is not None and cluster is not None:
            self.clusters.append(cluster)


class RunningSummary:
    """A suite's summary, added up chunk by chunk (``add``), holding no verdict.

    ``cluster_of`` maps a sample id to its cluster (its task, when a task has several runs or
    repeats); clustered statistics read ``Outcomes.cluster_counts``. Example::

        running = RunningSummary()
        for chunk in chunks:
            running.add(grade(chunk))
        print(running.summary().passed, running.verdicts.scores)
    """

    def __init__(self, cluster_of: Callable[[str], str] | None = None, pass_k: int | None = None) -> None:
        self.cluster_of = cluster_of
        self.pass_k = pass_k
        """The k of pass@k (``core.repeats``); None: the most attempts any task has."""
        self.cluster_keys: list[str] = []
        """Each cluster's key, in the order first seen (empty without ``cluster_of``)."""
        self._cluster_index: dict[str, int] = {}
        self._suite = SuiteSummary()
        self._graders: dict[str, GraderSummary] = {}
        self._skipped: dict[str, int] = {}
        self.verdicts = self._outcomes()
        """The samples' decided verdicts: passed, weighted score, cluster."""
        self.graders: dict[str, Outcomes] = {}
        """Each grader's decided results, by grader name, in the order graders were first seen."""

    def add(self, verdicts: Iterable[SampleVerdict]) -> RunningSummary:
        """Fold ``verdicts`` in (``summarize``'s rules); returns self."""
        suite, graders, outcomes = self._suite, self._graders, self.graders
        for v in verdicts:
            cluster = self._cluster(v.id) if self.cluster_of is not None else None
            status = v.status
            suite.total += 1
            if status is PASSED or status is FAILED:
                if status is PASSED:
                    suite.passed += 1
                else:
                    suite.failed += 1
                self.verdicts._add(status is PASSED, v.score, cluster)
            elif status is ERROR:
                suite.errors += 1
            else:
                suite.pending += 1
            if in_mean(status, v.score):
                suite.score_sum += v.score  # type: ignore[operator]  # in_mean: not None
                suite.scored += 1
            for r in v.results:
                g = graders.get(r.name)
                if g is None:
                    g = graders[r.name] = GraderSummary(r.name, r.type, r.weight)
                if r.name not in outcomes:
                    outcomes[r.name] = self._outcomes()
                g.total += 1
                rs = r.status
                if rs is PASSED or rs is FAILED:
                    if rs is PASSED:
                        g.passed += 1
                    else:
                        g.failed += 1
                    if r.score is not None:
                        g.score_sum += r.score
                        g.scored += 1
                    outcomes[r.name]._add(rs is PASSED, r.score, cluster)
                elif rs is ERROR:
                    g.errors += 1
                    code = r.error.value if r.error else "unknown"
                    g.error_codes[code] = g.error_codes.get(code, 0) + 1
                else:
                    g.pending += 1
            for name in v.skipped:
                self._skipped[name] = self._skipped.get(name, 0) + 1
        return self

    def summary(self) -> SuiteSummary:
        """The summary so far (a new object; adding more later does not change it)."""
        by_name = {name: _copy(g, self._intervals(self.graders[name])) for name, g in self._graders.items()}
        # A grader may be skipped before (or without) ever being graded.
        for name, count in self._skipped.items():
            g = by_name.get(name)
            if g is None:
                g = by_name[name] = GraderSummary(name, "-", None)
            g.skipped = count
        s = self._suite
        return SuiteSummary(s.total, s.passed, s.failed, s.errors, s.pending, list(by_name.values()),
                            self._intervals(self.verdicts), s.score_sum, s.scored)

    def _intervals(self, outcomes: Outcomes) -> Intervals:
        """``outcomes``' intervals, with pass@k's short tasks named by cluster key."""
        got = outcomes.intervals(self.pass_k)
        if got.repeats is not None and got.repeats.short_tasks:
            got = Intervals(got.pass_rate, got.mean_score, got.clusters, got.repeats.named(self.cluster_keys))
        return got

    def _outcomes(self) -> Outcomes:
        return Outcomes(clusters=array("I") if self.cluster_of is not None else None)

    def _cluster(self, sample_id: str) -> int:
        assert self.cluster_of is not None
        key = self.cluster_of(sample_id)
        index = self._cluster_index.get(key)
        if index is None:
            index = self._cluster_index[key] = len(self.cluster_keys)
            self.cluster_keys.append(key)
        return index


def _copy(g: GraderSummary, intervals: Intervals) -> GraderSummary:
    return GraderSummary(g.name, g.type, g.weight, g.total, g.passed, g.failed, g.errors, g.pending, g.skipped,
                         g.score_sum, dict(g.error_codes), intervals, g.scored)


def summarize(verdicts: Sequence[SampleVerdict], pass_k: int | None = None) -> SuiteSummary:
    """Per-suite counts and a per-grader table, in the order graders first appear; intervals
    clustered by the verdicts' ``cluster`` when they have one (and pass@k with ``pass_k``)."""
    clusters = {v.id: v.cluster for v in verdicts if v.cluster is not None}
    return RunningSummary(cluster_of=cluster_lookup(clusters), pass_k=pass_k).add(verdicts).summary()


def cluster_lookup(clusters: dict[str, str]) -> Callable[[str], str] | None:
    """A ``cluster_of`` for ``RunningSummary`` from sample id -> cluster for the clustered
    samples (any other sample is its own cluster); None when there are none."""
    return (lambda sample_id: clusters.get(sample_id, sample_id)) if clusters else None
