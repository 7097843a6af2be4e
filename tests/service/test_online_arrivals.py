"""The span intake's rows on both databases (``store.online_intake``) and the planner that
schedules them after the answer (``service.online.planner``): a batch is stored in one
statement, once (duplicates and re-sent batches store nothing), text and JSON keep their NULs,
each new span reaches the planner once, and the planner schedules exactly what the rules sample
and match."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "online"))
from otlp_build import NOW_NS, chat_attributes, new_trace_id, request, span  # noqa: E402

from assay.service.online.otlp import decode  # noqa: E402
from assay.service.online.planner import Planner  # noqa: E402
from assay.service.online.schedule import sampled  # noqa: E402
from assay.store import online_intake as arrivals  # noqa: E402
from assay.store.models import User  # noqa: E402
from assay.store.online_models import OnlineArrival, OnlineJob, OnlineRule, OnlineSpan  # noqa: E402


def _user(database, name: str = "alice") -> str:
    with database.session() as session:
        user = User(name=name)
        session.add(user)
        session.flush()
        return user.id


def _spans(count: int, **attributes):
    built = [span(new_trace_id(), bytes([n % 250 + 1]) * 8, f"chat {n}",
                  {**chat_attributes(f"question {n}", "Paris." if n % 2 else "Lyon."), **attributes},
                  start_ns=NOW_NS + n) for n in range(count)]
    return decode(request(*built).SerializeToString(), "application/x-protobuf").spans


def test_a_batch_is_stored_once_nuls_kept_and_its_new_spans_reach_the_planner_once(database):
    alice = _user(database)
    nul = _spans(1, **{"gen_ai.conversation.id": "c\x00nul", "note": "a\x00b\uffffc"})[0]
    nul.name = "chat\x00nul"
    batch = [nul, *_spans(3)]
    with database.session() as session:
        new = arrivals.insert_spans(session, alice, [*batch, batch[1]])  # a span twice in one batch: once
        arrivals.add_arrival(session, alice, new)
    assert len(new) == 4
    with database.session() as session:
        assert arrivals.insert_spans(session, alice, batch) == []  # the batch again: nothing new
        arrivals.add_arrival(session, alice, [])
        stored = {(s.trace_id, s.span_id): s for s in session.query(OnlineSpan)}
        assert arrivals.unplanned(session) == 4
        assert session.query(OnlineArrival).count() == 1
    kept = stored[nul.trace_id, nul.span_id]
    assert kept.name == "chat\x00nul" and kept.attributes["note"] == "a\x00b\uffffc"
    assert kept.attributes == nul.attributes and kept.resource == {"service.name": "shop"}
    assert kept.conversation_id in ("c\x00nul", "c\ufffdnul")  # an id: its NUL made storable on PostgreSQL
    assert (kept.start_ns, kept.end_ns, kept.parent_span_id) == (nul.start_ns, nul.end_ns, None)
    with database.session() as session:
        taken = arrivals.claim_arrivals(session, 10)
    assert taken == [(alice, new)]
    with database.session() as session:
        assert arrivals.claim_arrivals(session, 10) == [] and arrivals.unplanned(session) == 0


def test_the_planner_schedules_what_the_rules_sample_and_match_once(database):
    alice, bob = _user(database), _user(database, "bob")
    with database.session() as session:
        session.add_all([
            OnlineRule(id="r-span", user_id=alice, name="span", filter='gen_ai.request.model == "gpt-4o"',
                       sample_rate=0.3, scope="span", quiet_s=0, evaluators=[], enabled=True),
            OnlineRule(id="r-trace", user_id=alice, name="trace", filter="", sample_rate=0.1, scope="trace",
                       quiet_s=0, evaluators=[], enabled=True),
            OnlineRule(id="r-off", user_id=alice, name="off", filter="", sample_rate=1.0, scope="span",
                       quiet_s=0, evaluators=[], enabled=False)])
    batch = _spans(200)
    with database.session() as session:
        for user in (alice, bob):  # bob has no rule: his spans are planned nothing
            arrivals.add_arrival(session, user, arrivals.insert_spans(session, user, batch))
    woken: list[int] = []
    planner = Planner(database, 0.05, scheduled=lambda: woken.append(1))
    assert planner.run_once() == 2 and planner.run_once() == 0
    with database.session() as session:
        jobs = {(j.rule_id, j.target) for j in session.query(OnlineJob)}
        assert session.query(OnlineArrival).count() == 0
    want = {("r-span", f"{s.trace_id}:{s.span_id}") for s in batch if sampled(s.trace_id, 0.3)}
    want |= {("r-trace", s.trace_id) for s in batch if sampled(s.trace_id, 0.1)}
    assert jobs == want and 40 < len(want) < 120 and woken == [1]


def test_arrivals_another_planner_took_meanwhile_make_a_turn_write_nothing(database):
    """SQLite's planner reads arrivals before it writes: when one of them is gone by then (another
    process planned it), the turn deletes none of them and plans nothing."""
    alice = _user(database)
    for n in range(2):
        with database.session() as session:
            arrivals.add_arrival(session, alice, arrivals.insert_spans(session, alice, _spans(2 + n)))
    with database.session() as session:
        peeked = arrivals.peek_arrivals(session, 10)
    assert [len(ids) for _, _, ids in peeked] == [2, 3]
    with database.session() as session:  # the other planner
        assert arrivals.delete_arrivals(session, [peeked[0][0]])
    with database.session() as session:
        assert not arrivals.delete_arrivals(session, [arrival_id for arrival_id, _, _ in peeked])
    with database.session() as session:
        assert [arrival_id for arrival_id, _, _ in arrivals.peek_arrivals(session, 10)] == [peeked[1][0]]
