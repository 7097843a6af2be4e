"""An online rule's results, a page at a time, and its numbers: pass rate and mean score per
hour or day (by when the graded span started), each with its 95% interval (Wilson; t), split by
an attribute of the graded span (``gen_ai.request.model``, ...) when asked.

Only decided results count (``passed``, ``failed``); errors, ``not_applicable`` and ``skipped``
results are counted apart, as every summary of assay does. The database counts the results per
(bucket, value, status) (``store.online.result_sums``): what is read grows with the buckets and
values, not with the results.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

from sqlalchemy import select
from sqlalchemy.orm import Session

from assay.core.intervals import of_sums
from assay.store import online as rows
from assay.store.online_models import OnlineResult, OnlineRule

Bucket = Literal["hour", "day"]
DECIDED = ("passed", "failed")
MAX_VALUES = 50
"""A split keeps its 50 most frequent values; the rest are tallied as ``(other)``."""


def results_page(session: Session, rule_id: str, *, cursor: int | None, limit: int, status: str | None,
                 start: datetime | None, stop: datetime | None, newest_first: bool = False) -> list[OnlineResult]:
    """Up to ``limit`` of the rule's results in the order they were stored (the latest first with
    ``newest_first``), after the one whose id is ``cursor`` (None: from the start)."""
    query = select(OnlineResult).where(OnlineResult.rule_id == rule_id)
    if cursor is not None:
        query = query.where(OnlineResult.id < cursor if newest_first else OnlineResult.id > cursor)
    if status is not None:
        query = query.where(OnlineResult.status == status)
    if start is not None:
        query = query.where(OnlineResult.at >= start)
    if stop is not None:
        query = query.where(OnlineResult.at < stop)
    order = OnlineResult.id.desc() if newest_first else OnlineResult.id
    return list(session.scalars(query.order_by(order).limit(limit)))


@dataclass(slots=True)
class BucketTally:
    n: int = 0
    passed: int = 0
    score_n: int = 0
    score_sum: float = 0.0
    score_squares: float = 0.0
    other: dict[str, int] = field(default_factory=dict)

    def add(self, sums: Any) -> None:
        """Count a group of results of one status (a row of ``result_sums``): decided ones in the
        rate and the mean, any other apart."""
        if sums.status not in DECIDED:
            self.other[sums.status] = self.other.get(sums.status, 0) + int(sums.n)
            return
        self.n += int(sums.n)
        self.passed += int(sums.passed or 0)
        self.score_n += int(sums.scored or 0)
        self.score_sum += float(sums.score_sum or 0.0)
        self.score_squares += float(sums.score_squares or 0.0)

    def to_dict(self) -> dict[str, Any]:
        rate = self.passed / self.n if self.n else None
        mean = self.score_sum / self.score_n if self.score_n else None
        intervals = of_sums(self.n, self.passed, self.score_n, self.score_sum, self.score_squares)
        rate_ci, mean_ci = intervals.pass_rate, intervals.mean_score
        return {"graded": self.n, "passed": self.passed, "passRate": rate,
                "passRateCi": list(rate_ci) if rate_ci else None, "meanScore": mean,
                "meanScoreCi": list(mean_ci) if mean_ci else None, "notCounted": dict(sorted(self.other.items()))}


def shown(value: Any) -> str:
    """A split attribute's value as the summaries name it."""
    return "(none)" if value is None else str(value)


def summary(session: Session, rule: OnlineRule, *, start: datetime, stop: datetime, by: Bucket,
            split: str | None) -> list[dict[str, Any]]:
    """One entry per (bucket, value of ``split``), in time order."""
    groups = rows.result_sums(session, rule, start, stop, by=by, split=split)
    kept: set[str] | None = None
    if split is not None:
        counts: dict[str, int] = defaultdict(int)
        for group in groups:
            counts[shown(group.value)] += int(group.n)
        kept = set(sorted(counts, key=lambda value: (-counts[value], value))[:MAX_VALUES])
    tallies: dict[tuple[datetime, str | None], BucketTally] = defaultdict(BucketTally)
    for group in groups:
        value = None if kept is None else shown(group.value)
        if kept is not None and value not in kept:
            value = "(other)"
        tallies[(group.bucket, value)].add(group)
    out = []
    for (moment, value), tally in sorted(tallies.items(), key=lambda item: (item[0][0], item[0][1] or "")):
        entry: dict[str, Any] = {"start": moment.isoformat().replace("+00:00", "Z"), **tally.to_dict()}
        if split is not None:
            entry["value"] = value
        out.append(entry)
    return out
