"""Running moments of a stream of values (pass/fail as 1/0, or scores), with per-cluster
tallies only for values that belong to a cluster: a summary's statistical inputs stay a few
numbers per grader (plus two per task when tasks have several attempts), never the values."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass, field

from assay.core import stats


@dataclass(slots=True)
class Moments:
    n: int = 0
    total: float = 0.0
    squares: float = 0.0
    clusters: dict[str, list[float]] = field(default_factory=dict)
    """cluster -> [count, sum] of its values (only values added with a cluster)."""
    clustered_squares: float = 0.0

    def add(self, x: float, cluster: str | None = None) -> None:
        self.n += 1
        self.total += x
        self.squares += x * x
        if cluster is not None:
            self.clustered_squares += x * x
            tally = self.clusters.get(cluster)
            if tally is None:
                self.clusters[cluster] = [1, x]
            else:
                tally[0] += 1
                tally[1] += x

    def merge(self, other: Moments) -> None:
        """Fold ``other`` in (summaries built batch by batch add up exactly)."""
        self.n += other.n
        self.total += other.total
        self.squares += other.squares
        self.clustered_squares += other.clustered_squares
        for key, (count, total) in other.clusters.items():
            tally = self.clusters.get(key)
            if tally is None:
                self.clusters[key] = [count, total]
            else:
                tally[0] += count
                tally[1] += total

    @property
    def mean(self) -> float | None:
        return self.total / self.n if self.n else None

    def clustering(self) -> stats.Clustering | None:
        """(G, clustered standard error of the mean), when some cluster holds several values;
        values without a cluster count as clusters of one. None when nothing is clustered."""
        if not self.n or len(self.clusters) == self._clustered_n():
            return None
        m = self.total / self.n
        in_clusters = sum(t[1] for t in self.clusters.values())
        singles = self.n - self._clustered_n()
        single_sum = self.total - in_clusters
        single_sq = self.squares - self.clustered_squares
        ss = sum((s - c * m) ** 2 for c, s in self.clusters.values())
        ss += max(single_sq - 2 * m * single_sum + singles * m * m, 0.0)
        g = len(self.clusters) + singles
        if g < 2:
            return g, 0.0
        return g, math.sqrt(g / (g - 1) * ss) / self.n

    def _clustered_n(self) -> int:
        return int(sum(t[0] for t in self.clusters.values()))

    def rate_interval(self) -> stats.Interval | None:
        """The 95% interval of the mean of 0/1 values (a pass rate)."""
        return stats.rate_interval(self.total, self.n, self.clustering())

    def mean_interval(self) -> stats.Interval | None:
        """The 95% interval of the mean of scores in [0, 1]."""
        return stats.mean_interval(self.n, self.total, self.squares, self.clustering())

    def attempts(self) -> Iterator[tuple[int, int]]:
        """(attempts, passes) of each cluster that holds several 0/1 values."""
        for count, passes in self.clusters.values():
            if count >= 2:
                yield int(count), int(round(passes))


@dataclass(slots=True)
class Repeats:
    """How a grader (or the verdicts) fared across a task's attempts: k, the number of
    tasks with k attempts or more, mean pass@k and pass^k over them, and the mean share of
    pairs of attempts that agree (a judge's self-agreement)."""

    k: int
    tasks: int
    pass_at_k: float
    pass_hat_k: float
    consistency: float

    def to_dict(self) -> dict[str, float | int]:
        return {"k": self.k, "tasks": self.tasks, "pass_at_k": self.pass_at_k, "pass_hat_k": self.pass_hat_k,
                "consistency": self.consistency}


def repeats(rates: Moments) -> Repeats | None:
    """Repeat statistics of pass/fail ``rates`` (k: the fewest attempts of a repeated task);
    None when no task was attempted twice."""
    tallies = list(rates.attempts())
    if not tallies:
        return None
    k = min(n for n, _ in tallies)
    agree = [stats.self_agreement(n, c) for n, c in tallies]
    return Repeats(k, len(tallies), sum(stats.pass_at_k(n, c, k) for n, c in tallies) / len(tallies),
                   sum(stats.pass_hat_k(n, c, k) for n, c in tallies) / len(tallies),
                   sum(a for a in agree if a is not None) / len(tallies))
