"""Two slices of one online rule's results compared: two time windows, or two values of an
attribute of the graded span in one window. The slices are independent samples of traffic
(a span is in one or the other, never both), so the comparison is unpaired: per evaluator and
overall, each pass rate with its Wilson interval, the difference with Newcombe's unpaired
interval and the pooled two-proportion z test's p-value, and the mean scores."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from assay.core import stats
from assay.service.online.summary import BucketTally
from assay.store import online as rows
from assay.store.online_models import OnlineRule

OVERALL = "overall"


@dataclass(frozen=True, slots=True)
class Slice:
    """Results of spans that started in [start, stop), and, with ``split``, whose attribute
    ``split`` equals ``value`` (compared as text)."""

    start: datetime
    stop: datetime
    split: str | None = None
    value: str | None = None


def tallies(session: Session, rule: OnlineRule, part: Slice) -> dict[str, BucketTally]:
    """Per evaluator name, and ``overall``: the decided results' tallies of ``part``."""
    out: dict[str, BucketTally] = defaultdict(BucketTally)
    for group in rows.result_sums(session, rule, part.start, part.stop, per_evaluator=True, split=part.split):
        if part.split is not None and (group.value is None or str(group.value) != part.value):
            continue
        for key in (group.evaluator, OVERALL):
            out[key].add(group)
    return out


def compare(session: Session, rule: OnlineRule, base: Slice, new: Slice) -> dict[str, Any]:
    before, after = tallies(session, rule, base), tallies(session, rule, new)
    names = sorted((set(before) | set(after)) - {OVERALL})
    return {"paired": False, "graders": [_row(name, before.get(name), after.get(name)) for name in names],
            "overall": _row(OVERALL, before.get(OVERALL), after.get(OVERALL))}


def _row(name: str, base: BucketTally | None, new: BucketTally | None) -> dict[str, Any]:
    base, new = base or BucketTally(), new or BucketTally()
    b, n = base.to_dict(), new.to_dict()
    delta = (n["passRate"] - b["passRate"]) if b["passRate"] is not None and n["passRate"] is not None else None
    interval = stats.unpaired_rate_interval(base.passed, base.n, new.passed, new.n)
    score_delta = (n["meanScore"] - b["meanScore"]) if b["meanScore"] is not None and n["meanScore"] is not None \
        else None
    return {"grader": name, "baseGraded": base.n, "newGraded": new.n, "basePassRate": b["passRate"],
            "basePassRateCi": b["passRateCi"], "newPassRate": n["passRate"], "newPassRateCi": n["passRateCi"],
            "delta": delta, "deltaCi": list(interval) if interval else None,
            "pValue": stats.two_proportion_p(base.passed, base.n, new.passed, new.n),
            "baseMeanScore": b["meanScore"], "newMeanScore": n["meanScore"], "scoreDelta": score_delta,
            "baseNotCounted": b["notCounted"], "newNotCounted": n["notCounted"]}
