"""How results fared across a task's attempts (repeats, waza trials, Vally trajectories):
pass@k, pass^k and self-agreement, each task from its own attempts.

k is fixed for the whole run (``--pass-k``, the suite's ``pass_k``, else its ``repeats``,
else the most attempts any task has), never lowered to the fewest attempts of any task: a
task with fewer scored attempts than k (an attempt errored, a trial is missing) is reported
apart (``short``), not folded into pass@k with a smaller k. Each task's pass@k is Chen et al.'s
(2021) unbiased estimator from its own n scored attempts, c of them passed,
1 - C(n - c, k) / C(n, k), and pass^k (every one of k attempts passed) C(c, k) / C(n, k)
(``stats.pass_at_k``, ``stats.pass_hat_k``); the
run's figures are their means over tasks, each with a ``stats.bounded_interval`` over tasks.
Self-agreement (the share of pairs of a task's attempts that agree) needs only two attempts.
Pure Python over per-task tallies: no array, no object per attempt.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from assay.core import stats

SHORT_LISTED = 20
"""Tasks short of k attempts named in a summary (all are counted)."""


@dataclass(frozen=True, slots=True)
class Repeats:
    """pass@k and pass^k over the ``tasks`` with k scored attempts or more (None when none has),
    with their 95% intervals over tasks; ``short``: how many tasks had fewer than k (but at
    least one) and ``short_tasks`` the first of them (indices of the summary's clusters, or
    their keys once named); ``consistency``: the mean self-agreement over the
    ``agreement_tasks`` with two attempts or more, with its interval."""

    k: int
    tasks: int
    pass_at_k: float | None
    pass_at_k_ci: stats.Interval | None
    pass_hat_k: float | None
    pass_hat_k_ci: stats.Interval | None
    consistency: float
    consistency_ci: stats.Interval
    agreement_tasks: int
    short: int = 0
    short_tasks: tuple[Any, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {"k": self.k, "tasks": self.tasks, "pass_at_k": self.pass_at_k, "pass_at_k_ci": _pair(self.pass_at_k_ci),
                "pass_hat_k": self.pass_hat_k, "pass_hat_k_ci": _pair(self.pass_hat_k_ci),
                "consistency": self.consistency, "consistency_ci": _pair(self.consistency_ci),
                "agreement_tasks": self.agreement_tasks, "short": self.short, "short_tasks": list(self.short_tasks)}

    def named(self, keys: list[str]) -> Repeats:
        """The same figures with ``short_tasks`` named by cluster key rather than index."""
        return _replace_short(self, tuple(keys[i] for i in self.short_tasks))


def _replace_short(r: Repeats, short_tasks: tuple[Any, ...]) -> Repeats:
    return Repeats(r.k, r.tasks, r.pass_at_k, r.pass_at_k_ci, r.pass_hat_k, r.pass_hat_k_ci, r.consistency,
                   r.consistency_ci, r.agreement_tasks, r.short, short_tasks)


def _pair(interval: stats.Interval | None) -> list[float] | None:
    return list(interval) if interval else None


def repeats(tallies: Iterable[tuple[int, int]], k: int | None = None) -> Repeats | None:
    """The figures of tasks given as (scored attempts n, passed c), in cluster order; ``k``
    fixed by the run (None: the most attempts any task has). None when no task has two
    attempts (nothing was repeated)."""
    tasks = [(n, c) for n, c in tallies if n > 0]
    if not any(n >= 2 for n, _ in tasks):
        return None
    k = max(n for n, _ in tasks) if k is None else k
    if k < 1:
        raise ValueError(f"pass@k needs k >= 1, not {k}")
    at = [stats.pass_at_k(n, c, k) for n, c in tasks if n >= k]
    every = [stats.pass_hat_k(n, c, k) for n, c in tasks if n >= k]
    agree = [a for n, c in tasks if (a := stats.self_agreement(n, c)) is not None]
    short = [i for i, (n, _) in enumerate(tasks) if n < k]
    at_k, at_ci = stats.mean_of_bounded(at) or (None, None)
    hat_k, hat_ci = stats.mean_of_bounded(every) or (None, None)
    consistency, consistency_ci = stats.mean_of_bounded(agree) or (0.0, (0.0, 1.0))
    return Repeats(k, len(at), at_k, at_ci, hat_k, hat_ci, consistency, consistency_ci, len(agree), len(short),
                   tuple(short[:SHORT_LISTED]))
