"""A server grading online work dies (SIGKILL) or stops (SIGTERM) mid-slice, on both databases:
its online slice is taken over by the next server after the lease (at once when the stop gave
it back), and every job is graded once: one result per span, each job in one slice, the slice
in flight claimed twice and no other slice more than once."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import httpx2 as httpx
import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "online"))
from live_serve import Serve, assay  # noqa: E402
from otlp_build import chat_attributes, new_trace_id, request, span  # noqa: E402
from sqlalchemy import func, select  # noqa: E402

from assay.store import Database  # noqa: E402
from assay.store.models import RunSlice, SliceKind, SliceState  # noqa: E402
from assay.store.online_models import JobState, OnlineJob, OnlineResult  # noqa: E402

SPANS = 320
SLOW = ("import time\n\ndef evaluate(input, output, expected, metadata):\n"
        "    time.sleep(0.03)\n    return {'passed': 'Paris' in output}\n")
LEASE_S = 3


def _server(tmp_path, db_url: str) -> tuple[Serve, str]:
    environ = {**os.environ, "ASSAY_DATABASE_URL": db_url, "ASSAY_QUEUE_POLL_MS": "100", "ASSAY_RUN_SLOTS": "1",
               "ASSAY_RUN_LEASE_S": str(LEASE_S)}
    assert assay("users", "create", "shop", env=environ).returncode == 0
    made = assay("tokens", "create", "shop", env=environ)
    assert made.returncode == 0, made.stderr
    return Serve(environ, tmp_path / "server.log", "--log-level", "warning").start(), made.stdout.split()[-1]


def _count(database: Database, query) -> int:
    with database.session() as session:
        return session.scalar(query) or 0


def _wait(check, what: str, timeout_s: float = 90):
    deadline = time.monotonic() + timeout_s
    while not (got := check()):
        assert time.monotonic() < deadline, f"{what}: not within {timeout_s} s"
        time.sleep(0.05)
    return got


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["killed", "stopped"])
def test_online_work_of_a_server_that_dies_mid_slice_is_graded_once_by_the_next(tmp_path, db_url, sig):
    server, token = _server(tmp_path, db_url)
    database = Database(db_url)
    try:
        with httpx.Client(base_url=server.url, headers={"Authorization": f"Bearer {token}"}, timeout=30) as client:
            evaluator = client.post("/api/v1/evaluators", json={"name": "slow", "type": "code", "config": {
                "language": "python", "code": SLOW}}).json()["data"]["id"]
            rule = client.post("/api/v1/online-rules", json={"name": "chat", "filter": 'gen_ai.operation.name == "chat"',
                                                             "evaluators": [{"evaluatorId": evaluator}]})
            assert rule.status_code == 200, rule.text
            rule_id = rule.json()["data"]["id"]
            spans = [span(new_trace_id(), n.to_bytes(8, "big"), "chat", chat_attributes("Capital?", "Paris."))
                     for n in range(1, SPANS + 1)]
            sent = client.post("/v1/traces", content=request(*spans).SerializeToString(),
                               headers={"Content-Type": "application/x-protobuf"})
            assert sent.status_code == 200, sent.text
        results = select(func.count()).where(OnlineResult.rule_id == rule_id)
        _wait(lambda: _count(database, results) > 0, "the first slice is graded")
        in_flight = _wait(lambda: _count(database, select(func.max(RunSlice.id)).where(
            RunSlice.kind == SliceKind.ONLINE.value, RunSlice.state == SliceState.LEASED)), "a slice is in flight")
        server.stop(sig)
        with database.session() as session:
            stopped = session.get(RunSlice, in_flight)
            assert stopped.state == (SliceState.PENDING if sig == signal.SIGTERM else SliceState.LEASED)
            assert session.scalar(select(func.count()).where(OnlineJob.slice_id == in_flight,
                                                             OnlineJob.state == JobState.LEASED.value)) > 0
        graded_before = _count(database, results)
        assert graded_before < SPANS
        restarted = time.monotonic()
        server.start()
        _wait(lambda: _count(database, results) == SPANS, "every span is graded")
        took = time.monotonic() - restarted
        with database.session() as session:
            taken_over = session.get(RunSlice, in_flight)
            assert (taken_over.state, taken_over.attempts) == (SliceState.DONE, 2)
            attempts = session.execute(select(RunSlice.attempts, func.count()).where(
                RunSlice.kind == SliceKind.ONLINE.value).group_by(RunSlice.attempts)).all()
            assert dict(attempts)[2] == 1 and set(dict(attempts)) == {1, 2}, attempts
            jobs = session.execute(select(OnlineJob.state, OnlineJob.attempts, func.count()).group_by(
                OnlineJob.state, OnlineJob.attempts)).all()
            assert jobs == [(JobState.DONE.value, 1, SPANS)], jobs  # each job taken into one slice, once
            targets = session.scalar(select(func.count(OnlineResult.target.distinct())).where(
                OnlineResult.rule_id == rule_id))
            assert targets == SPANS
            passed = session.scalar(select(func.count()).where(OnlineResult.rule_id == rule_id,
                                                               OnlineResult.status == "passed"))
            assert passed == SPANS  # graded for real by the sandbox, not killed answers stored as errors
        assert took < 60, took
    finally:
        server.stop()
        database.dispose()
