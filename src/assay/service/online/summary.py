"""An online rule's results, a page at a time, and its numbers: pass rate and mean score per
hour or day (by when the graded span started), each with its 95% interval (Wilson; t), split by
an attribute of the graded span (``gen_ai.request.model``, ...) when asked.

Only decided results count (``passed``, ``failed``); errors, ``not_applicable`` and ``skipped``
results are counted apart, as every summary of assay does. Results are read in a stream and
tallied per (bucket, value): memory grows with the buckets, not with the results.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from sqlalchemy import and_, select
from sqlalchemy.orm import Session

from assay.core.intervals import of_sums
from assay.store.online_models import OnlineResult, OnlineRule, OnlineSpan

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

    def add(self, status: str, passed: bool, score: float | None) -> None:
        """Count one result: a decided one in the rate and the mean, any other apart."""
        if status not in DECIDED:
            self.other[status] = self.other.get(status, 0) + 1
            return
        self.n += 1
        self.passed += bool(passed)
        if score is not None:
            self.score_n += 1
            self.score_sum += float(score)
            self.score_squares += float(score) ** 2

    def to_dict(self) -> dict[str, Any]:
        rate = self.passed / self.n if self.n else None
        mean = self.score_sum / self.score_n if self.score_n else None
        intervals = of_sums(self.n, self.passed, self.score_n, self.score_sum, self.score_squares)
        rate_ci, mean_ci = intervals.pass_rate, intervals.mean_score
        return {"graded": self.n, "passed": self.passed, "passRate": rate,
                "passRateCi": list(rate_ci) if rate_ci else None, "meanScore": mean,
                "meanScoreCi": list(mean_ci) if mean_ci else None, "notCounted": dict(sorted(self.other.items()))}


def bucket_of(moment: datetime, by: Bucket) -> datetime:
    moment = moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)
    moment = moment.replace(minute=0, second=0, microsecond=0)
    return moment.replace(hour=0) if by == "day" else moment


def summary(session: Session, rule: OnlineRule, *, start: datetime, stop: datetime, by: Bucket,
            split: str | None) -> list[dict[str, Any]]:
    """One entry per (bucket, value of ``split``), in time order."""
    columns = [OnlineResult.at, OnlineResult.status, OnlineResult.passed, OnlineResult.score]
    query = select(*columns).where(OnlineResult.rule_id == rule.id, OnlineResult.at >= start, OnlineResult.at < stop)
    if split is not None:
        query = select(*columns, OnlineSpan.attributes).join(OnlineSpan, and_(
            OnlineSpan.user_id == rule.user_id, OnlineSpan.trace_id == OnlineResult.trace_id,
            OnlineSpan.span_id == OnlineResult.span_id), isouter=True).where(
            OnlineResult.rule_id == rule.id, OnlineResult.at >= start, OnlineResult.at < stop)
    tallies: dict[tuple[datetime, str | None], BucketTally] = defaultdict(BucketTally)
    values: dict[str, int] = defaultdict(int)
    row: Any
    for row in session.execute(query.execution_options(yield_per=2000)):
        value: str | None = None
        if split is not None:
            attributes = row[4] or {}
            raw = attributes.get(split)
            value = "(none)" if raw is None else str(raw)
            if value not in values and len(values) >= MAX_VALUES:
                value = "(other)"
            values[value] += 1
        tallies[(bucket_of(row[0], by), value)].add(row[1], row[2], row[3])
    out = []
    for (moment, value), tally in sorted(tallies.items(), key=lambda item: (item[0][0], item[0][1] or "")):
        entry: dict[str, Any] = {"start": moment.isoformat().replace("+00:00", "Z"), **tally.to_dict()}
        if split is not None:
            entry["value"] = value
        out.append(entry)
    return out
