"""The sample verdict over columns: ``core.aggregate.judge_sample`` for every row at once.

Scores are summed grader by grader in the suite's order, as ``weighted_score`` sums them, so
each row's score is the same float.
"""

from __future__ import annotations

import numpy as np

from assay.runner.columnar._columns import Columns

PASSED, FAILED, ERROR, PENDING = range(4)


def judge_rows(graded: list[tuple[Columns, float]], threshold: float | None) -> tuple[np.ndarray, np.ndarray]:
    """Status codes (as in ``_columns.STATUSES``) and weighted scores (NaN: none) per row."""
    n = len(graded[0][0].status) if graded else 0
    total = np.zeros(n)
    weights = np.zeros(n)
    any_failed, any_error, any_pending = (np.zeros(n, dtype=bool) for _ in range(3))
    for cols, weight in graded:
        scored = (cols.status <= FAILED) & ~np.isnan(cols.score)
        total = np.where(scored, total + cols.score * weight, total)
        weights = np.where(scored, weights + weight, weights)
        any_failed |= cols.status == FAILED
        any_error |= cols.status == ERROR
        any_pending |= cols.status == PENDING
    has_score = weights > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        score = np.where(has_score, total / weights, np.nan)
    failed = any_failed if threshold is None else has_score & (score < threshold)
    if threshold is None:
        rest = np.full(n, PASSED)
    else:  # with a threshold, a sample nothing scored fails (unless it has no graders at all)
        rest = np.where(has_score, PASSED, FAILED if graded else PASSED)
    status = np.where(failed, FAILED, np.where(any_error, ERROR, np.where(any_pending, PENDING, rest)))
    return status.astype(np.int8), score
