"""A summary's 95% intervals, from the compact outcomes a run keeps (``core.summary.Outcomes``:
a pass flag and a score per decided result, and each result's cluster when samples are
clustered). Without clusters the intervals come from three sums (``of_sums``: floats, no numpy);
with clusters, per-cluster tallies are taken with ``numpy.bincount``, never per-sample objects,
numpy being imported then and only then."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from assay.core import stats

if TYPE_CHECKING:
    import numpy as np


@dataclass(frozen=True, slots=True)
class Repeats:
    """How results fared across a task's attempts: k (the fewest attempts of a repeated task),
    the tasks with k attempts or more, their mean pass@k and pass^k (every attempt of k
    passed), and the mean share of pairs of attempts that agree (a judge's self-agreement)."""

    k: int
    tasks: int
    pass_at_k: float
    pass_hat_k: float
    consistency: float

    def to_dict(self) -> dict[str, float | int]:
        return {"k": self.k, "tasks": self.tasks, "pass_at_k": self.pass_at_k, "pass_hat_k": self.pass_hat_k,
                "consistency": self.consistency}


@dataclass(frozen=True, slots=True)
class Intervals:
    """95% intervals of a pass rate and a mean score; ``clusters``: how many clusters (tasks)
    they were clustered by, None when every sample is its own."""

    pass_rate: stats.Interval | None = None
    mean_score: stats.Interval | None = None
    clusters: int | None = None
    repeats: Repeats | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"pass_rate_ci": list(self.pass_rate) if self.pass_rate else None,
                               "mean_score_ci": list(self.mean_score) if self.mean_score else None,
                               "clusters": self.clusters}
        if self.repeats is not None:
            out["repeats"] = self.repeats.to_dict()
        return out


def of_arrays(passed: np.ndarray, scores: np.ndarray, clusters: np.ndarray | None = None) -> Intervals:
    """Intervals of decided results: ``passed`` 1/0, ``scores`` (NaN, a result without a
    score, counts as 0, as in the mean score), ``clusters`` each result's cluster index."""
    import numpy as np

    n = len(passed)
    if n == 0:
        return Intervals()
    x = passed.astype(np.float64)
    s = np.nan_to_num(scores.astype(np.float64), nan=0.0)
    rate_c = score_c = None
    again = None
    g = None
    if clusters is not None:
        idx = clusters.astype(np.intp)
        sizes = np.bincount(idx)
        keep = sizes > 0
        sizes = sizes[keep].astype(np.float64)
        if sizes.max() > 1:
            g = len(sizes)
            passes = np.bincount(idx, weights=x)[keep]
            rate_c = (g, stats.cluster_se(sizes, passes) if g > 1 else 0.0)
            score_c = (g, stats.cluster_se(sizes, np.bincount(idx, weights=s)[keep]) if g > 1 else 0.0)
            again = _repeats(sizes, passes)
    return Intervals(stats.rate_interval(float(x.sum()), n, rate_c),
                     stats.mean_interval(n, float(s.sum()), float(s @ s), score_c), g, again)


def of_sums(n: int, passed: float, score_sum: float, score_squares: float) -> Intervals:
    """Intervals of ``n`` unclustered decided results from their sums: passes, scores and
    squared scores (the same as ``of_arrays`` without clusters, in a few floats)."""
    if n == 0:
        return Intervals()
    return Intervals(stats.rate_interval(passed, n), stats.mean_interval(n, score_sum, score_squares))


def _repeats(sizes: np.ndarray, passes: np.ndarray) -> Repeats | None:
    """Vectorised over tasks: C(m, k) / C(n, k) is the product of (m - i) / (n - i) for i < k
    (``stats.pass_at_k`` and ``stats.pass_hat_k`` are the scalar forms the tests check it by)."""
    import numpy as np

    many = sizes >= 2
    if not many.any():
        return None
    n, c = sizes[many], np.round(passes[many])
    k = int(n.min())
    none_pass = all_pass = np.ones_like(n)
    for i in range(k):
        none_pass = none_pass * np.clip(n - c - i, 0, None) / (n - i)
        all_pass = all_pass * np.clip(c - i, 0, None) / (n - i)
    agree = (c * (c - 1) + (n - c) * (n - c - 1)) / (n * (n - 1))
    return Repeats(k, len(n), float((1 - none_pass).mean()), float(all_pass.mean()), float(agree.mean()))
