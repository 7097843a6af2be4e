"""Many graders, one gate: p-values adjusted for multiple comparisons, and the smallest
difference a comparison could detect.

With ten graders compared at alpha = 0.05 and nothing changed, some grader falls below alpha
by chance about 40% of the time; a gate on the raw p-values fails CI that often. Holm's
step-down method (the default) keeps the chance that any grader is flagged without a real
change at or below alpha, whatever the graders' dependence; Benjamini-Hochberg keeps the
expected share of false flags among the flagged at alpha instead (more power, weaker promise).
Both are checked against ``statsmodels.stats.multitest.multipletests`` (tests/core).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist

ADJUSTMENTS = ("holm", "bh", "none")
POWER = 0.8
ADJUSTMENT_NAMES = {"holm": "Holm's step-down correction", "bh": "Benjamini-Hochberg's false discovery rate",
                    "none": "no correction"}


def adjusted(p_values: Sequence[float | None], method: str) -> list[float | None]:
    """``p_values`` adjusted by ``method`` (holm, bh or none) over those that are not None
    (a comparison without pairs has no test and does not count in the family)."""
    if method not in ADJUSTMENTS:
        raise ValueError(f"unknown adjustment {method!r}; use {', '.join(ADJUSTMENTS)}")
    tested = [(i, p) for i, p in enumerate(p_values) if p is not None]
    out: list[float | None] = [None] * len(p_values)
    m = len(tested)
    if method == "none":
        for i, p in tested:
            out[i] = p
        return out
    ordered = sorted(tested, key=lambda t: t[1])
    if method == "holm":
        running = 0.0
        for rank, (i, p) in enumerate(ordered):
            running = max(running, min(1.0, (m - rank) * p))
            out[i] = running
    else:
        running = 1.0
        for rank in range(m - 1, -1, -1):
            i, p = ordered[rank]
            running = min(running, m * p / (rank + 1))
            out[i] = min(1.0, running)
    return out


def fewest_changes(alpha: float) -> int:
    """The fewest samples that must all change one way before the exact two-sided test on
    them can reach ``alpha`` (2 * 0.5^k < alpha); 6 at 0.05."""
    if alpha <= 0:
        raise ValueError("fewest_changes needs alpha > 0")
    k = 1
    while 2 * 0.5 ** k >= alpha:
        k += 1
    return k


def detectable(pairs: int, spread: float, alpha: float, power: float = POWER) -> float | None:
    """The smallest difference in pass rate (a share, 0..1) that ``pairs`` paired samples
    detect with probability ``power`` at two-sided level ``alpha``: (z_(1-alpha/2) + z_power)
    times the standard deviation of the per-pair differences (``spread``, as observed) over
    sqrt(pairs), by the normal approximation; never below the fewest one-way changes the exact
    test needs (``fewest_changes``) over the pairs, which is what it is when nothing changed.
    Capped at 1 (no difference in a rate is larger); None without pairs."""
    if pairs <= 0 or alpha <= 0:
        return None
    z = NormalDist().inv_cdf(1 - alpha / 2) + NormalDist().inv_cdf(power)
    return min(1.0, max(z * spread / math.sqrt(pairs), fewest_changes(alpha) / pairs))
