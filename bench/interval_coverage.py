"""How often the 95% intervals of runs with few tasks cover the truth: a coverage simulation.

Each simulated run has T tasks (5, 10, 30), each attempted 4 times; a task's pass chance is drawn
from a Beta (tasks differ, so attempts of one task are correlated) and its scores from it. For
each run the intervals assay reports are taken as a run takes them (``core.intervals.of_arrays``
for the clustered pass rate, mean score and pass@k; ``stats.paired_mean_interval`` over tasks for
the score difference of two runs, as ``core.compare`` takes it when samples were repeated), and
counted when they hold the true value of the population of tasks. A 95% interval should cover
93-97% of the time; the percentile bootstrap over tasks that the score difference used before is
measured beside it for comparison.

    python bench/interval_coverage.py [--runs N] [--tasks 5,10,30]
"""

from __future__ import annotations

import argparse
import math

import numpy as np

from assay.core import stats
from assay.core.intervals import of_arrays

ATTEMPTS = 4
K = 3
A, B = 3.0, 1.5
"""Task pass chances ~ Beta(3, 1.5): most tasks are easy, some hard (a skewed, realistic spread)."""
SHIFT = 0.08
"""The new run's tasks pass more often, by about this much (a change the comparison should find)."""


def truths(rng: np.random.Generator) -> dict[str, float]:
    """The population's true values, from a million tasks."""
    p = rng.beta(A, B, 1_000_000)
    q = np.clip(p + SHIFT, 0, 1)
    return {"pass rate": float(p.mean()), "mean score": float(p.mean()), f"pass@{K}": float((1 - (1 - p) ** K).mean()),
            "score delta": float((q - p).mean()), "score delta (old bootstrap)": float((q - p).mean())}


def _bootstrap(d: np.ndarray, rng: np.random.Generator, resamples: int = 2000) -> tuple[float, float]:
    means = d[rng.integers(0, len(d), size=(resamples, len(d)))].mean(axis=1)
    lo, hi = np.quantile(means, [0.025, 0.975])
    return float(lo), float(hi)


def coverage(tasks: int, runs: int, seed: int = 20240101) -> dict[str, float]:
    """Share of ``runs`` simulated runs of ``tasks`` tasks whose interval held the truth, per figure."""
    rng = np.random.default_rng(seed)
    truth = truths(rng)
    held = dict.fromkeys(truth, 0)
    clusters = np.repeat(np.arange(tasks), ATTEMPTS)
    for _ in range(runs):
        p = rng.beta(A, B, tasks)
        q = np.clip(p + SHIFT, 0, 1)
        base = (rng.random((tasks, ATTEMPTS)) < p[:, None]).astype(np.uint8)
        new = (rng.random((tasks, ATTEMPTS)) < q[:, None]).astype(np.uint8)
        got = of_arrays(base.ravel(), base.ravel().astype(np.float64), clusters, pass_k=K)
        assert got.repeats is not None
        d = new.mean(axis=1) - base.mean(axis=1)
        found = {"pass rate": got.pass_rate, "mean score": got.mean_score, f"pass@{K}": got.repeats.pass_at_k_ci,
                 "score delta": stats.paired_mean_interval(d), "score delta (old bootstrap)": _bootstrap(d, rng)}
        for name, interval in found.items():
            held[name] += interval is not None and interval[0] <= truth[name] <= interval[1]
    return {name: n / runs for name, n in held.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--tasks", default="5,10,30")
    args = parser.parse_args()
    sizes = [int(t) for t in args.tasks.split(",")]
    table = {t: coverage(t, args.runs) for t in sizes}
    names = list(table[sizes[0]])
    print(f"coverage of 95% intervals, {args.runs} simulated runs per size, {ATTEMPTS} attempts per task "
          f"(Monte Carlo error ±{1.96 * math.sqrt(0.95 * 0.05 / args.runs):.1%})")
    print("| interval | " + " | ".join(f"{t} tasks" for t in sizes) + " |")
    print("|---|" + "---:|" * len(sizes))
    for name in names:
        print(f"| {name} | " + " | ".join(f"{table[t][name]:.1%}" for t in sizes) + " |")


if __name__ == "__main__":
    main()
