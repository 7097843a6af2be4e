"""Online grading and task runs share one run queue, served fairly across users (on both
databases, one run slot, so every claim is a choice between them): one user's spans are graded
while another user's large run goes on, not after it; one user's flood of spans does not hold
another user's run back, and goes on being graded while it runs."""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "online"))
from online_support import post  # noqa: E402
from otlp_build import chat_attributes, new_trace_id, request, span  # noqa: E402
from service_support import make_api  # noqa: E402
from sqlalchemy import func, select  # noqa: E402

from assay.store import Database  # noqa: E402
from assay.store.models import Run, RunSlice, SliceKind  # noqa: E402
from assay.store.online_models import JobState, OnlineJob, OnlineResult  # noqa: E402
from assay.store.users import get_user  # noqa: E402

SLOW = ("import time\n\ndef evaluate(input, output, expected, metadata):\n"
        "    time.sleep(0.02)\n    return {'passed': True}\n")
DEADLINE_S = 60


@pytest.fixture
def api(db_url, shared_resources):
    yield from make_api(db_url, shared_resources, run_slots=1, run_slice_size=8, queue_poll_ms=50)


def _evaluator(api, user: str, slow: bool) -> str:
    body = ({"name": "slow", "type": "code", "config": {"language": "python", "code": SLOW}} if slow else
            {"name": "Paris", "type": "preset", "config": {"presetType": "regex", "params": {"pattern": "Paris"}}})
    made = api.call("POST", "/evaluators", user, json=body)
    assert made.status_code == 200, made.text
    return made.json()["data"]["id"]


def _rule(api, user: str, slow: bool) -> str:
    made = api.call("POST", "/online-rules", user, json={
        "name": "chat", "filter": 'gen_ai.operation.name == "chat"',
        "evaluators": [{"evaluatorId": _evaluator(api, user, slow)}]})
    assert made.status_code == 200, made.text
    return made.json()["data"]["id"]


def _run(api, user: str, rows: int, slow: bool) -> str:
    task = api.call("POST", "/tasks", user, json={
        "name": "t", "evaluators": [{"evaluatorId": _evaluator(api, user, slow)}],
        "dataset": {"rows": [{"id": f"r{i}", "output": "Paris", "expected": "Paris"} for i in range(rows)]}})
    assert task.status_code == 200, task.text
    started = api.call("POST", f"/tasks/{task.json()['data']['id']}/runs", user)
    assert started.status_code == 200, started.text
    return started.json()["data"]["id"]


def _send(api, user: str, spans: int) -> None:
    for first in range(0, spans, 100):
        batch = [span(new_trace_id(), n.to_bytes(8, "big"), "chat", chat_attributes("Capital?", "Paris."))
                 for n in range(first + 1, min(first + 100, spans) + 1)]
        assert post(api, request(*batch), user).status_code == 200


def _graded(api, user: str, rule_id: str) -> int:
    """The rule's results (as its owner reads them: the first page's count, then the database's)."""
    assert api.call("GET", f"/online-rules/{rule_id}/results", user).status_code == 200
    database = Database(api.database_url)
    try:
        with database.session() as session:
            return session.scalar(select(func.count()).where(OnlineResult.rule_id == rule_id)) or 0
    finally:
        database.dispose()


def _status(api, user: str, run_id: str) -> dict:
    return api.call("GET", f"/runs/{run_id}", user).json()["data"]


def _wait(check, what: str):
    deadline = time.monotonic() + DEADLINE_S
    while not (got := check()):
        assert time.monotonic() < deadline, f"{what}: not within {DEADLINE_S} s"
        time.sleep(0.05)
    return got


def _claims(api, user: str, kind: SliceKind, after, before) -> int:
    """Slices of ``kind`` of ``user`` claimed between the two moments."""
    database = Database(api.database_url)
    try:
        with database.session() as session:
            user_id = get_user(session, user).id
            return session.scalar(select(func.count()).where(
                RunSlice.user_id == user_id, RunSlice.kind == kind.value, RunSlice.claimed_at > after,
                RunSlice.claimed_at < before)) or 0
    finally:
        database.dispose()


def _jobs(api, state: JobState) -> int:
    database = Database(api.database_url)
    try:
        with database.session() as session:
            return session.scalar(select(func.count()).where(OnlineJob.state == state.value)) or 0
    finally:
        database.dispose()


def test_spans_are_graded_while_another_users_large_run_goes_on(api):
    big = _run(api, "alice", 240, slow=True)  # thirty slices of eight samples, 20 ms each
    rule_id = _rule(api, "bob", slow=False)
    _wait(lambda: _status(api, "alice", big)["done"] > 0, "alice's run starts")
    _send(api, "bob", 20)
    _wait(lambda: _graded(api, "bob", rule_id) == 20, "bob's spans are graded")
    run = _status(api, "alice", big)
    assert run["status"] == "running" and run["done"] < run["total"], run  # not after alice's run: during it
    database = Database(api.database_url)
    with database.session() as session:
        first_job = session.scalar(select(func.min(OnlineJob.created_at)))
        served = session.scalar(select(func.min(RunSlice.claimed_at)).where(RunSlice.kind == SliceKind.ONLINE.value))
    database.dispose()
    # One slot: the slice of alice's in progress when bob's jobs came finished, then bob's was
    # claimed (one more of alice's at most, claimed while bob's jobs were being committed).
    assert _claims(api, "alice", SliceKind.RUN, first_job, served) <= 1
    _wait(lambda: _status(api, "alice", big)["status"] == "completed", "alice's run completes")


def test_a_flood_of_spans_does_not_hold_another_users_run_back(api):
    rule_id = _rule(api, "bob", slow=True)
    _send(api, "bob", 1200)  # 64-job slices of 20 ms jobs: far longer to grade than alice's run
    _wait(lambda: _graded(api, "bob", rule_id) > 0, "bob's spans are being graded")
    run_id = _run(api, "alice", 24, slow=False)  # three slices
    _wait(lambda: _status(api, "alice", run_id)["status"] == "completed", "alice's run completes")
    graded = _graded(api, "bob", rule_id)
    assert graded < 1200 and _jobs(api, JobState.PENDING) > 0  # completed while bob's backlog was still there
    database = Database(api.database_url)
    with database.session() as session:
        run = session.get(Run, run_id)
        queued, last = run.created_at, session.scalar(select(func.max(RunSlice.claimed_at))
                                                      .where(RunSlice.run_id == run_id))
    database.dispose()
    # Served in turn: between alice's run and its last slice, one of bob's slices per slice of hers at most.
    assert _claims(api, "bob", SliceKind.ONLINE, queued, last) <= 3
    _wait(lambda: _graded(api, "bob", rule_id) > graded, "bob's spans go on being graded")
