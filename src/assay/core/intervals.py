"""A summary's 95% intervals, from the compact outcomes a run keeps (``core.summary.Outcomes``:
a pass flag and a score per decided result, and each result's cluster when samples are
clustered). Without clusters the intervals come from a few sums (``of_sums``: floats, no numpy);
with clusters, per-cluster tallies are taken with ``numpy.bincount``, never per-sample objects,
numpy being imported then and only then."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from assay.core import stats
from assay.core.repeats import Repeats, repeats

if TYPE_CHECKING:
    import numpy as np


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


def of_arrays(passed: np.ndarray, scores: np.ndarray, clusters: np.ndarray | None = None,
              pass_k: int | None = None) -> Intervals:
    """Intervals of decided results: ``passed`` 1/0, ``scores`` (NaN, a result without a
    score, is out of the mean score, as ``core.summary`` leaves it out), ``clusters`` each
    result's cluster index; ``pass_k``: the k of pass@k (``core.repeats``; None: the most
    attempts of any task)."""
    import numpy as np

    n = len(passed)
    if n == 0:
        return Intervals()
    x = passed.astype(np.float64)
    has = ~np.isnan(scores)
    s = scores.astype(np.float64)[has]
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
            score_c = _score_clustering(idx[has], s)
            tallies = zip(sizes.astype(np.int64).tolist(), np.round(passes).astype(np.int64).tolist(), strict=True)
            again = repeats(tallies, pass_k)
    return Intervals(stats.rate_interval(float(x.sum()), n, rate_c),
                     stats.mean_interval(len(s), float(s.sum()), float(s @ s), score_c), g, again)


def of_sums(n: int, passed: float, scored: int, score_sum: float, score_squares: float) -> Intervals:
    """Intervals of ``n`` unclustered decided results from their sums: passes, and the count,
    sum and squared sum of the scores they have (the same as ``of_arrays`` without clusters)."""
    if n == 0:
        return Intervals()
    return Intervals(stats.rate_interval(passed, n), stats.mean_interval(scored, score_sum, score_squares))


def _score_clustering(idx: np.ndarray, s: np.ndarray) -> stats.Clustering | None:
    """The clustering of the scored results (a cluster whose every result lacks a score is not
    one of the mean score's clusters)."""
    import numpy as np

    if not len(s):
        return None
    sizes = np.bincount(idx)
    keep = sizes > 0
    g = int(keep.sum())
    return g, stats.cluster_se(sizes[keep].astype(np.float64), np.bincount(idx, weights=s)[keep]) if g > 1 else 0.0
