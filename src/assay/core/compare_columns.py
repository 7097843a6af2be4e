"""``core.compare.compare_runs`` on runs held as columns (a verdict table: one status and score
per sample and grader, and the verdict's), for runs where each sample id is graded once: the
same figures to the last digit (both go through ``compare.paired_figures``), the same flips
in the same order, with the same reasons, but counted with numpy instead of a tally per
sample and grader, and the reasons read (``Reasons``) only for the samples that flipped.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from assay.core.compare import (
    OVERALL,
    Comparison,
    Flip,
    GraderComparison,
    Reasoned,
    grader_reason,
    overall_reason,
    paired_figures,
    present,
)
from assay.core.result import Status

CODES: dict[Status, int] = {Status.PASSED: 1, Status.FAILED: 2, Status.ERROR: 3, Status.PENDING: 4}
"""A status as a column holds it; 0 (``ABSENT``): the grader has no result for the sample."""
ABSENT = 0
_PASSED, _FAILED = CODES[Status.PASSED], CODES[Status.FAILED]


@dataclass(slots=True)
class VerdictColumns:
    """A run's verdicts as columns, samples in dataset order (each sample id once)."""

    ids: list[str]
    status: np.ndarray
    """The verdict's status code per sample (int8, ``CODES``)."""
    score: np.ndarray
    """The verdict's score per sample (float64; NaN: none)."""
    graders: list[str]
    """The graders, in the order their first result comes."""
    grader_status: np.ndarray
    """Per grader (a row each, in ``graders``' order) and sample: the result's status code."""
    grader_score: np.ndarray
    """Per grader and sample: the result's score (NaN: none, or no result)."""


Reasons = Callable[[str, Sequence[int]], Mapping[int, Sequence[Reasoned]]]
"""``(side, positions)`` -> for each position (a sample's place in that side's ``VerdictColumns``),
the sample's results that did not pass, in stored order; ``side`` is ``base`` or ``new``."""


@dataclass(slots=True)
class _Pending:
    """A comparison whose flips are known by position, their reasons not read yet."""

    out: GraderComparison
    flips: list[tuple[bool, int, int]]
    """(to the failing side, base position, new position) in the order the flips are listed."""


def compare_columns(base: VerdictColumns, new: VerdictColumns, reasons: Reasons, *, labels: Mapping[str, str],
                    adjust: str = "holm", alpha: float = 0.05) -> Comparison:
    """Compare run ``new`` with run ``base`` as ``compare_runs`` does (``labels``: grader key
    -> shown name, for the overall reasons)."""
    at_new = {k: i for i, k in enumerate(new.ids)}
    b_pos: list[int] = []
    n_pos: list[int] = []
    base_only: list[str] = []
    for i, k in enumerate(base.ids):
        j = at_new.get(k)
        if j is None:
            base_only.append(k)
        else:
            b_pos.append(i)
            n_pos.append(j)
    in_base = set(base.ids)
    new_only = [k for k in new.ids if k not in in_base]
    bi, ni = np.array(b_pos, dtype=np.intp), np.array(n_pos, dtype=np.intp)
    b_set, n_set = set(base.graders), set(new.graders)
    names = base.graders + [g for g in new.graders if g not in b_set]
    pending = [_compare(name, *_side(base, name, bi), *_side(new, name, ni), bi, ni) for name in names]
    for p in pending:
        p.out.present = present(p.out.grader in b_set, p.out.grader in n_set)
    overall = _compare(OVERALL, base.status[bi], base.score[bi], new.status[ni], new.score[ni], bi, ni)
    _reasoned([*pending, overall], base, new, reasons, labels)
    out = Comparison([p.out for p in pending], overall.out, base_only=base_only, new_only=new_only)
    return out.finish(adjust, alpha)


def _side(run: VerdictColumns, name: str, at: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """A grader's status and score columns at the paired positions (all absent when the run lacks it)."""
    if name not in run.graders:
        return np.zeros(len(at), dtype=np.int8), np.full(len(at), np.nan)
    row = run.graders.index(name)
    return run.grader_status[row][at], run.grader_score[row][at]


def _compare(name: str, xs: np.ndarray, xscore: np.ndarray, ys: np.ndarray, yscore: np.ndarray, bi: np.ndarray,
             ni: np.ndarray) -> _Pending:
    decided = ((xs == _PASSED) | (xs == _FAILED)) & ((ys == _PASSED) | (ys == _FAILED))
    pairs = int(decided.sum())
    out = GraderComparison(name, pairs, None, None, None, None, None, left_out=len(xs) - pairs)
    pending = _Pending(out, [])
    if not pairs:
        return pending
    xr = (xs[decided] == _PASSED).astype(np.float64)  # a pass rate of one attempt: 1.0 or 0.0
    yr = (ys[decided] == _PASSED).astype(np.float64)
    # 0.0 + score as a tally sums it (a -0.0 score counts as 0.0 there too)
    d = paired_figures(out, xr, yr, True, xscore[decided] + 0.0, yscore[decided] + 0.0)
    b_at, n_at = bi[decided], ni[decided]
    pending.flips = [(True, int(b_at[k]), int(n_at[k])) for k in np.flatnonzero(d < 0)]
    pending.flips += [(False, int(b_at[k]), int(n_at[k])) for k in np.flatnonzero(d > 0)]
    return pending


def _reasoned(pending: list[_Pending], base: VerdictColumns, new: VerdictColumns, reasons: Reasons,
              labels: Mapping[str, str]) -> None:
    """Give each flip the reasons of its failing side, read for the flipped samples only."""
    wanted: dict[str, set[int]] = {"base": set(), "new": set()}
    for p in pending:
        for to_fail, b, n in p.flips:
            wanted["new" if to_fail else "base"].add(n if to_fail else b)
    read = {side: reasons(side, sorted(at)) if at else {} for side, at in wanted.items()}
    for p in pending:
        for to_fail, b, n in p.flips:
            side, run, at = ("new", new, n) if to_fail else ("base", base, b)
            results = read[side].get(at, ())
            said = (overall_reason(results, labels) if p.out.grader == OVERALL
                    else grader_reason(results, p.out.grader))
            flip = Flip(run.ids[at], None, said) if to_fail else Flip(run.ids[at], said, None)
            (p.out.to_fail if to_fail else p.out.to_pass).append(flip)
