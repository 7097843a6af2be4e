"""Error bars: intervals for pass rates and mean scores, and paired tests of two runs.

Pure math on compact inputs (counts, sums, and per-cluster tallies), numpy only. Every
function is checked against statsmodels and scipy on generated data (tests/core/test_stats.py).

A *cluster* is the unit that is independent: a task whose runs, trials or repeats are graded
apart (Miller 2024, "Adding Error Bars to Evals"). Samples of one cluster are correlated, so
their standard error is the cluster-robust one; with one sample per cluster every formula
falls back to the usual one.

Intervals are ``(lo, hi)`` tuples of floats, or None when there is nothing to estimate from.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist

import numpy as np

CONFIDENCE = 0.95
RESAMPLES = 10_000
SEED = 20240101
"""Bootstraps are seeded, so the same results files give the same intervals."""

Interval = tuple[float, float]


def z_value(confidence: float = CONFIDENCE) -> float:
    """The two-sided standard normal quantile (1.96 for 95%)."""
    return NormalDist().inv_cdf(0.5 + confidence / 2)


def wilson(successes: float, n: float, confidence: float = CONFIDENCE) -> Interval | None:
    """Wilson score interval for a proportion (``n`` may be an effective, non-integer size)."""
    if n <= 0:
        return None
    z = z_value(confidence)
    p = successes / n
    z2n = z * z / n
    centre = (p + z2n / 2) / (1 + z2n)
    half = z / (1 + z2n) * math.sqrt(max(p * (1 - p) / n + z2n / (4 * n), 0.0))
    return max(0.0, centre - half), min(1.0, centre + half)


def cluster_se(sizes: np.ndarray, sums: np.ndarray) -> float:
    """Cluster-robust standard error of the mean of all observations, from each cluster's
    size and sum: sqrt(G/(G-1) * sum_c (S_c - n_c * mean)^2) / N, the small-sample factor
    G/(G-1) as in statsmodels' ``cov_type="cluster"``. Needs two clusters or more."""
    g = len(sizes)
    total = float(sizes.sum())
    mean = float(sums.sum()) / total
    resid = sums - sizes * mean
    return math.sqrt(g / (g - 1) * float(resid @ resid)) / total


Clustering = tuple[int, float]
"""(number of clusters G, cluster-robust standard error of the mean)."""


def rate_interval(passed: float, n: int, clustered: Clustering | None = None,
                  confidence: float = CONFIDENCE) -> Interval | None:
    """95% interval of a pass rate: Wilson; ``clustered`` (G clusters and the clustered
    standard error, when some cluster holds several samples), Wilson on the effective sample
    size n / deff, the design effect deff being the clustered variance over the binomial one
    (never below 1: correlation inside a task cannot make a run more informative than its
    samples)."""
    if n <= 0:
        return None
    if clustered is None or clustered[0] == n:
        return wilson(passed, n, confidence)
    g, se = clustered
    p = passed / n
    if g < 2 or p in (0.0, 1.0):
        # No spread to measure the correlation from: the worst case, every cluster one sample.
        return wilson(p * g, g, confidence)
    deff = max(1.0, se * se / (p * (1 - p) / n))
    return wilson(passed / deff, n / deff, confidence)


def t_quantile(q: float, df: float) -> float:
    """Quantile of Student's t with ``df`` degrees of freedom (bisection on the CDF)."""
    if df <= 0:
        raise ValueError("t_quantile needs df > 0")
    if q == 0.5:
        return 0.0
    if q < 0.5:
        return -t_quantile(1 - q, df)
    lo, hi = 0.0, 1.0
    while _t_cdf(hi, df) < q:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        if _t_cdf(mid, df) < q:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-13 * max(1.0, hi):
            break
    return (lo + hi) / 2


def _t_cdf(t: float, df: float) -> float:
    x = df / (df + t * t)
    tail = 0.5 * _betainc(df / 2, 0.5, x)
    return 1 - tail if t > 0 else tail


def _betainc(a: float, b: float, x: float) -> float:
    """Regularised incomplete beta I_x(a, b) by its continued fraction (Lentz)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    log_front = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x > (a + 1) / (a + b + 2):
        return 1.0 - _betainc(b, a, 1 - x)
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    f = d
    for m in range(1, 500):
        for num in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                    -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            f *= c * d
        if abs(c * d - 1.0) < 1e-15:
            break
    return math.exp(log_front) * f / a


def mean_interval(n: int, total: float, squares: float, clustered: Clustering | None = None,
                  confidence: float = CONFIDENCE) -> Interval | None:
    """t interval of a mean from its count, sum and sum of squares; ``clustered`` (G clusters
    and the clustered standard error, when some cluster holds several values), with G - 1
    degrees of freedom. Clipped to [0, 1], where scores live. None below two values (or two
    clusters)."""
    if n < 2:
        return None
    mean = total / n
    q = 0.5 + confidence / 2
    if clustered is not None and clustered[0] != n:
        g, se = clustered
        if g < 2:
            return None
        df = g - 1
    else:
        var = max(squares - n * mean * mean, 0.0) / (n - 1)
        se, df = math.sqrt(var / n), n - 1
    half = t_quantile(q, df) * se
    return max(0.0, mean - half), min(1.0, mean + half)


def bootstrap_mean(values: Sequence[float] | np.ndarray, *, resamples: int = RESAMPLES, seed: int = SEED,
                   confidence: float = CONFIDENCE) -> Interval | None:
    """Seeded percentile bootstrap interval of a mean. For paired runs, pass the per-cluster
    differences: resampling clusters is the paired (and clustered) bootstrap."""
    x = np.asarray(values, dtype=np.float64)
    if len(x) < 2:
        return None
    rng = np.random.default_rng(seed)
    levels, counts = np.unique(x, return_counts=True)
    if len(levels) <= FEW_LEVELS:
        # A resample of n values holds each distinct value a multinomial number of times: the same
        # bootstrap, drawn as resamples x levels counts instead of resamples x n indices (pass/fail
        # and score differences take a handful of values: 5,000 pairs in ms, not a second).
        draws = rng.multinomial(len(x), counts / len(x), size=resamples)
        means = draws @ levels / len(x)
    else:
        means = _index_means(x, rng, resamples)
    alpha = 1 - confidence
    lo, hi = np.quantile(means, [alpha / 2, 1 - alpha / 2])
    return float(lo), float(hi)


FEW_LEVELS = 64
"""Distinct values up to which a bootstrap draws counts per value rather than indices."""


def _index_means(x: np.ndarray, rng: np.random.Generator, resamples: int) -> np.ndarray:
    """The means of ``resamples`` resamples of ``x`` drawn index by index."""
    means = np.empty(resamples)
    step = max(1, 2_000_000 // len(x))  # bounded memory: at most ~16 MB of indices at a time
    for start in range(0, resamples, step):
        stop = min(resamples, start + step)
        means[start:stop] = x[rng.integers(0, len(x), size=(stop - start, len(x)))].mean(axis=1)
    return means


BOOTSTRAP_MAX = 5_000
"""Most pairs a bootstrap resamples (10,000 x 5,000 draws, ~1 s); past that the t interval,
which the bootstrap's agrees with at that size (the mean of thousands of bounded values is
normal to well within the bootstrap's own Monte Carlo error)."""


def paired_mean_interval(differences: Sequence[float] | np.ndarray, *, seed: int = SEED,
                         confidence: float = CONFIDENCE) -> Interval | None:
    """95% interval of the mean of paired differences: the seeded bootstrap up to
    ``BOOTSTRAP_MAX`` pairs, the t interval beyond (bounded time on any run)."""
    d = np.asarray(differences, dtype=np.float64)
    if len(d) <= BOOTSTRAP_MAX:
        return bootstrap_mean(d, seed=seed, confidence=confidence)
    half = t_quantile(0.5 + confidence / 2, len(d) - 1) * float(d.std(ddof=1)) / math.sqrt(len(d))
    return float(d.mean()) - half, float(d.mean()) + half


def binom_cdf(k: int, n: int, p: float = 0.5) -> float:
    """P(X <= k) for X ~ Binomial(n, p), for any n: the largest term from log-gamma, the
    others from it by the ratio of neighbours, stopping once they no longer count."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    mode = min(k, math.floor((n + 1) * p))
    log_top = (math.lgamma(n + 1) - math.lgamma(mode + 1) - math.lgamma(n - mode + 1)
               + mode * math.log(p) + (n - mode) * math.log1p(-p))
    odds = p / (1 - p)
    total, term = 0.0, 1.0
    for j in range(mode, k):  # terms above the mode, up to k (only when k is past the mode)
        term *= (n - j) / (j + 1) * odds
        total += term
    total += 1.0
    term = 1.0
    for j in range(mode, 0, -1):  # terms below the mode, until negligible
        term *= j / (n - j + 1) / odds
        total += term
        if term < 1e-17 * total:
            break
    return min(1.0, math.exp(log_top) * total)


def mcnemar_exact(to_fail: int, to_pass: int) -> float:
    """Exact two-sided McNemar p-value on the discordant pairs (a binomial test of
    ``to_pass`` against ``to_fail`` at 1/2); 1.0 when no pair changed."""
    n = to_fail + to_pass
    if n == 0:
        return 1.0
    return min(1.0, 2 * binom_cdf(min(to_fail, to_pass), n))


def paired_rate_interval(both: int, base_only: int, new_only: int, neither: int,
                         confidence: float = CONFIDENCE) -> Interval | None:
    """Newcombe's (1998) method 10 interval for new rate minus base rate on paired samples:
    the two Wilson intervals combined with the continuity-corrected phi correlation of the
    2x2 table. ``base_only``: passed in base only (turned to fail); ``new_only``: the reverse."""
    n = both + base_only + new_only + neither
    if n == 0:
        return None
    p1, p2 = (both + base_only) / n, (both + new_only) / n
    w1, w2 = wilson(both + base_only, n, confidence), wilson(both + new_only, n, confidence)
    assert w1 is not None and w2 is not None
    (l1, u1), (l2, u2) = w1, w2
    a = float(both + base_only) * (new_only + neither) * (both + new_only) * (base_only + neither)
    b = both * neither - base_only * new_only
    c = b - n / 2 if b > n / 2 else (b if b < 0 else 0.0)
    phi = c / math.sqrt(a) if a > 0 else 0.0
    delta = p2 - p1
    lo = delta - math.sqrt(max((p2 - l2) ** 2 - 2 * phi * (p2 - l2) * (u1 - p1) + (u1 - p1) ** 2, 0.0))
    hi = delta + math.sqrt(max((u2 - p2) ** 2 - 2 * phi * (u2 - p2) * (p1 - l1) + (p1 - l1) ** 2, 0.0))
    return max(-1.0, lo), min(1.0, hi)


def pass_at_k(n: int, c: int, k: int) -> float:
    """Chance that at least one of ``k`` attempts drawn from ``n`` (``c`` passed) passed: the
    unbiased pass@k estimator (Chen et al. 2021)."""
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """Chance that all ``k`` attempts drawn from ``n`` (``c`` passed) passed: pass^k (tau-bench)."""
    return math.comb(c, k) / math.comb(n, k) if k <= n else 0.0


def self_agreement(n: int, c: int) -> float | None:
    """Share of pairs of a cluster's ``n`` attempts that agree (both pass or both fail);
    None below two attempts."""
    if n < 2:
        return None
    return (math.comb(c, 2) + math.comb(n - c, 2)) / math.comb(n, 2)
