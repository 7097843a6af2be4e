"""Error bars: intervals for pass rates and mean scores, and paired tests of two runs.

Pure math on compact inputs (counts, sums, and per-cluster tallies): plain floats, numpy only
in ``cluster_se``'s arrays (imported by their callers), so a run without clusters never loads
it. Every function is checked against statsmodels and scipy on generated data
(tests/core/test_stats.py), and bounded means by coverage simulations (``bench/interval_coverage.py``).

A *cluster* is the unit that is independent: a task whose runs, trials or repeats are graded
apart (Miller 2024, "Adding Error Bars to Evals"). Samples of one cluster are correlated, so
their standard error is the cluster-robust one; with one sample per cluster every formula
falls back to the usual one.

Intervals are ``(lo, hi)`` tuples of floats, or None when there is nothing to estimate from.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import numpy as np

CONFIDENCE = 0.95

Interval = tuple[float, float]


Z_95 = 1.959963984540054
"""The two-sided 95% standard normal quantile, to double precision (tests check it against
``statistics.NormalDist``): the one every default interval needs, without importing
``statistics`` (and ``random``, ``hashlib``, ``fractions`` with it) on every run."""


def z_value(confidence: float = CONFIDENCE) -> float:
    """The two-sided standard normal quantile (1.96 for 95%)."""
    if confidence == CONFIDENCE:
        return Z_95
    from statistics import NormalDist

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
    standard error, when some cluster holds several samples), ``bounded_interval`` over the G
    clusters, whose effective size is n / deff, the design effect deff being the clustered
    variance over the binomial one (never below 1: correlation inside a task cannot make a run
    more informative than its samples)."""
    if n <= 0:
        return None
    if clustered is None or clustered[0] == n:
        return wilson(passed, n, confidence)
    g, se = clustered
    return bounded_interval(passed / n, se if g > 1 else 0.0, g, most=n, confidence=confidence)


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
    """95% interval of a mean score (values in [0, 1]) from its count, sum and sum of squares;
    ``clustered`` (G clusters and the clustered standard error, when some cluster holds several
    values): ``bounded_interval`` over the n values, or over the G clusters. None when there is
    nothing to estimate from (no value)."""
    if n < 1:
        return None
    mean = total / n
    if clustered is not None and clustered[0] != n:
        g, se = clustered
        return bounded_interval(mean, se if g > 1 else 0.0, g, confidence=confidence)
    return bounded_interval(mean, standard_error(n, total, squares), n, confidence=confidence)


def standard_error(n: int, total: float, squares: float) -> float:
    """Standard error of a mean from its count, sum and sum of squares (0 below two values)."""
    if n < 2:
        return 0.0
    mean = total / n
    return math.sqrt(max(squares - n * mean * mean, 0.0) / (n - 1) / n)


def bounded_interval(mean: float, se: float, units: int, *, low: float = 0.0, high: float = 1.0,
                     most: float | None = None, confidence: float = CONFIDENCE) -> Interval | None:
    """95% interval of a mean of values bounded by [``low``, ``high``] (a score in [0, 1], a
    paired difference in [-1, 1]), with standard error ``se`` from ``units`` independent units
    (samples, or clusters). Wilson-type: the Wilson interval of the mean's position in the
    bounds on its effective size (the number of 0/1 values with the same standard error), so
    it stays inside the bounds and, unlike a t interval, has width at them. Two guards for
    small runs: the quantile is Student's t on ``units`` - 1 degrees of freedom (the z of 1.96
    from ~30 units on; at 5 tasks a bootstrap's interval covered 85% of the time, this one
    93-97%, ``bench/interval_coverage.py``), and when the values show no spread (every one the same, or
    all at a bound), the exact case the standard error cannot see, the effective size is the
    units themselves, as though each were 0 or 1. ``most``: a cap on the effective size (a pass
    rate's samples). None without a unit."""
    if units < 1:
        return None
    width = high - low
    p = min(max((mean - low) / width, 0.0), 1.0)
    s = se / width
    q = t_quantile(0.5 + confidence / 2, units - 1) if units > 1 else z_value(confidence)
    size = p * (1 - p) / (s * s) if s > 0 and 0 < p < 1 else float(units)
    if most is not None:
        size = min(size, most)
    lo, hi = _wilson_q(p, size, q)
    return low + lo * width, low + hi * width


def _wilson_q(p: float, n: float, q: float) -> Interval:
    z2n = q * q / n
    centre = (p + z2n / 2) / (1 + z2n)
    half = q / (1 + z2n) * math.sqrt(max(p * (1 - p) / n + z2n / (4 * n), 0.0))
    # At a bound the bound itself (rounding would leave it a hair inside).
    return 0.0 if p <= 0 else max(0.0, centre - half), 1.0 if p >= 1 else min(1.0, centre + half)


def paired_mean_interval(differences: Sequence[float] | np.ndarray,
                         confidence: float = CONFIDENCE) -> Interval | None:
    """95% interval of the mean of paired differences in [-1, 1] (per sample, or per task when
    samples were repeated: a task is then the unit): ``bounded_interval`` on [-1, 1], so 20 of
    20 pairs that lost a whole point each give [-1.0, -0.8], not a point. None without a pair."""
    d = [float(x) for x in differences]
    n = len(d)
    if n == 0:
        return None
    total = math.fsum(d)
    return bounded_interval(total / n, standard_error(n, total, math.fsum(x * x for x in d)), n, low=-1.0,
                            confidence=confidence)


def mean_of_bounded(values: Sequence[float], confidence: float = CONFIDENCE) -> tuple[float, Interval] | None:
    """The mean of per-unit values in [0, 1] (a task's pass@k, its self-agreement) and its
    ``bounded_interval``, the effective size capped at the units: such values take a few levels
    piled near a bound (most tasks pass@k 1, a few 0.75), a rare level is a small count, and a
    standard error from a small count is too small (pass@3 over 30 tasks covered 88% of the time
    uncapped, ``bench/interval_coverage.py``). None without a value."""
    n = len(values)
    if n == 0:
        return None
    total = math.fsum(values)
    interval = bounded_interval(total / n, standard_error(n, total, math.fsum(v * v for v in values)), n,
                                most=n, confidence=confidence)
    assert interval is not None
    return total / n, interval


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


def unpaired_rate_interval(base_passed: int, base_n: int, new_passed: int, new_n: int,
                           confidence: float = CONFIDENCE) -> Interval | None:
    """Newcombe's (1998) method 10 interval for new rate minus base rate on independent samples
    (the two Wilson intervals combined; no pairing)."""
    w1, w2 = wilson(base_passed, base_n, confidence), wilson(new_passed, new_n, confidence)
    if w1 is None or w2 is None:
        return None
    (l1, u1), (l2, u2) = w1, w2
    p1, p2 = base_passed / base_n, new_passed / new_n
    delta = p2 - p1
    lo = delta - math.sqrt((p2 - l2) ** 2 + (u1 - p1) ** 2)
    hi = delta + math.sqrt((u2 - p2) ** 2 + (p1 - l1) ** 2)
    return max(-1.0, lo), min(1.0, hi)


def two_proportion_p(base_passed: int, base_n: int, new_passed: int, new_n: int) -> float | None:
    """Two-sided p-value of the pooled two-proportion z test (independent samples); None
    without samples on both sides, 1.0 when every one passed or every one failed."""
    if base_n == 0 or new_n == 0:
        return None
    pooled = (base_passed + new_passed) / (base_n + new_n)
    variance = pooled * (1 - pooled) * (1 / base_n + 1 / new_n)
    if variance <= 0:
        return 1.0
    z = (new_passed / new_n - base_passed / base_n) / math.sqrt(variance)
    return min(1.0, math.erfc(abs(z) / math.sqrt(2)))  # two-sided normal tail: 2 * (1 - Phi(|z|))


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
