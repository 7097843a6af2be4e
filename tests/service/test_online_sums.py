"""An online rule's summary and window comparison are counted by the database
(``store.online.result_sums``), per hour or day, evaluator, status and value of a span
attribute: on both databases they give what counting each result in Python gives, NULs,
numbers, booleans, missing values and the ``(other)`` past the 50 most frequent values
included."""

from __future__ import annotations

import math
import random
from collections import defaultdict
from datetime import UTC, datetime, timedelta

from assay.service.online import compare, summary
from assay.store.models import User
from assay.store.online_models import OnlineResult, OnlineRule, OnlineSpan

START = datetime(2026, 11, 1, tzinfo=UTC)
STATUSES = ("passed", "failed", "error", "not_applicable")


def _stored(database, count: int, values) -> tuple[str, list[dict]]:
    rng = random.Random(7)
    with database.session() as session:
        user = User(name="alice")
        session.add(user)
        session.flush()
        rule = OnlineRule(user_id=user.id, name="r", filter="", sample_rate=1.0, scope="span", evaluators=[],
                          enabled=True, quiet_s=0, created_at=START, updated_at=START)
        session.add(rule)
        session.flush()
        made = []
        for i in range(count):
            value = values(rng, i)
            status = rng.choice(STATUSES)
            made.append({"at": START + timedelta(minutes=rng.randrange(3 * 24 * 60)), "value": value, "status": status,
                         "passed": status == "passed", "score": None if rng.random() < 0.2 else rng.random(),
                         "evaluator": rng.choice(["exact", "judge"])})
            attributes = {} if value is _MISSING else {"model": value}
            session.add(OnlineSpan(user_id=user.id, trace_id=f"{i:032x}", span_id=f"{i + 1:016x}", name="chat",
                                   kind=3, start_ns=0, end_ns=1, status_code=0, attributes=attributes, events=[],
                                   resource={}, received_at=START))
            session.add(OnlineResult(rule_id=rule.id, target=f"{i}", generation=1, trace_id=f"{i:032x}",
                                     span_id=f"{i + 1:016x}", evaluator_id="e", evaluator_version="v",
                                     evaluator_name=made[-1]["evaluator"], kind="preset", status=status,
                                     passed=made[-1]["passed"], score=made[-1]["score"], weight=1.0, details={},
                                     latency_ms=1.0, at=made[-1]["at"], graded_at=START))
        return rule.id, made


_MISSING = object()


def _expected(made: list[dict], by: str, split: bool) -> dict[tuple[str, str | None], tuple[int, int, float | None]]:
    """(bucket start, value) -> (graded, passed, mean score), counting each result."""
    counts: dict[str, int] = defaultdict(int)
    for row in made:
        counts[_shown(row["value"])] += 1
    kept = set(sorted(counts, key=lambda v: (-counts[v], v))[:summary.MAX_VALUES])
    groups: dict[tuple[str, str | None], list[dict]] = defaultdict(list)
    for row in made:
        at = row["at"].replace(minute=0)
        at = at.replace(hour=0) if by == "day" else at
        value = (_shown(row["value"]) if _shown(row["value"]) in kept else "(other)") if split else None
        groups[(at.isoformat().replace("+00:00", "Z"), value)].append(row)
    out = {}
    for key, rows in groups.items():
        decided = [r for r in rows if r["status"] in ("passed", "failed")]
        scores = [r["score"] for r in decided if r["score"] is not None]
        out[key] = (len(decided), sum(r["passed"] for r in decided), sum(scores) / len(scores) if scores else None)
    return out


def _shown(value) -> str:
    return "(none)" if value is _MISSING or value is None else str(value)


def _got(entries: list[dict], split: bool) -> dict[tuple[str, str | None], tuple[int, int, float | None]]:
    return {(e["start"], e["value"] if split else None): (e["graded"], e["passed"], e["meanScore"]) for e in entries}


def _same(got, expected) -> None:
    assert got.keys() == expected.keys()
    for key, (graded, passed, mean) in expected.items():
        assert got[key][:2] == (graded, passed), key
        assert (got[key][2] is None) == (mean is None) and (mean is None or math.isclose(got[key][2], mean)), key


def test_the_summary_counted_by_the_database_is_the_summary_counted_by_hand(database):
    kinds = ["gpt-4o", "gpt\x00nul", 7, 1.5, True, None, _MISSING, "模型"]
    rule_id, made = _stored(database, 600, lambda rng, i: rng.choice(kinds))
    with database.session() as session:
        rule = session.get(OnlineRule, rule_id)
        for by in ("hour", "day"):
            for split in (None, "model"):
                got = summary.summary(session, rule, start=START, stop=START + timedelta(days=4), by=by, split=split)
                _same(_got(got, split is not None), _expected(made, by, split is not None))
        values = {e["value"] for e in summary.summary(session, rule, start=START, stop=START + timedelta(days=4),
                                                      by="day", split="model")}
    assert values == {"gpt-4o", "gpt\x00nul", "7", "1.5", "True", "(none)", "模型"}


def test_past_fifty_values_the_least_frequent_are_other(database):
    rule_id, made = _stored(database, 400, lambda rng, i: f"m{i % 60}" if i < 300 else "common")
    with database.session() as session:
        rule = session.get(OnlineRule, rule_id)
        got = summary.summary(session, rule, start=START, stop=START + timedelta(days=4), by="day", split="model")
    _same(_got(got, True), _expected(made, "day", True))
    assert {"common", "(other)"} <= {e["value"] for e in got} and len({e["value"] for e in got}) == 51


def test_two_values_compared_count_what_counting_by_hand_counts(database):
    rule_id, made = _stored(database, 500, lambda rng, i: rng.choice(["a", "b", "c"]))
    window = (START, START + timedelta(days=4))
    with database.session() as session:
        rule = session.get(OnlineRule, rule_id)
        answer = compare.compare(session, rule, compare.Slice(*window, "model", "a"), compare.Slice(*window, "model", "b"))
    assert [row["grader"] for row in answer["graders"]] == ["exact", "judge"]
    for side, value in (("base", "a"), ("new", "b")):
        decided = [r for r in made if r["value"] == value and r["status"] in ("passed", "failed")]
        for row in [*answer["graders"], answer["overall"]]:
            mine = [r for r in decided if row["grader"] in (r["evaluator"], "overall")]
            assert row[f"{side}Graded"] == len(mine)
            assert math.isclose(row[f"{side}PassRate"], sum(r["passed"] for r in mine) / len(mine))
            assert row[f"{side}NotCounted"] == dict(sorted(_counted(made, value, row["grader"]).items()))


def _counted(made: list[dict], value: str, grader: str) -> dict[str, int]:
    out: dict[str, int] = defaultdict(int)
    for r in made:
        if r["value"] == value and r["status"] not in ("passed", "failed") and grader in (r["evaluator"], "overall"):
            out[r["status"]] += 1
    return out
