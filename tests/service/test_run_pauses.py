"""A runaway evaluator is paused in its run (issue 36, item 6): after ``run_pause_after_timeouts``
timeouts in a row its remaining samples are not sent to the sandbox, the run stays active and says
so (API and page), a restart keeps it paused, and a resume grades exactly what was left: every
(sample, evaluator) stored once, nothing lost.

Through the app on a real database with the real sandbox. One evaluation at a time
(``run_concurrency=1``), so the order of the samples is the order they are graded in."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from service_support import seed_users

from assay.settings import Settings

RUNAWAY = ("def evaluate(input, output, expected, metadata):\n"
           "    if input == 'slow':\n        while True:\n            pass\n"
           "    return {'passed': output == expected}\n")
PAUSE_AFTER = 3
SLOW, FAST = 4, 6
LIMIT_MS = 400


@contextmanager
def served(db_url: str, resources, tokens: dict[str, str]) -> Iterator:
    """The app on ``db_url`` (a server's life: leaving the block is its shutdown); ``call(user, ...)``."""
    from fastapi.testclient import TestClient

    from assay.server import create_app

    settings = Settings(database_url=db_url, run_pause_after_timeouts=PAUSE_AFTER, run_concurrency=1, run_slots=1,
                        queue_poll_ms=50)
    with TestClient(create_app(settings, resources=resources)) as client:
        def call(user: str, method: str, path: str, **kwargs):
            url = path if path.startswith("/pages/") else "/api/v1" + path
            return client.request(method, url, headers={"Authorization": f"Bearer {tokens[user]}"},
                                  **kwargs)
        yield call


def wait_for(condition, what: str, limit_s: float = 60) -> None:
    deadline = time.monotonic() + limit_s  # a bound against hanging, not a measure
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.05)


def results(call, run_id: str) -> list[dict]:
    reply = call("alice", "GET", f"/runs/{run_id}/results", params={"limit": 1000})
    assert reply.status_code == 200, reply.text
    return reply.json()["data"]["items"]


@pytest.fixture
def tokens(db_url: str) -> dict[str, str]:
    return seed_users(db_url)


def test_a_runaway_evaluator_pauses_stays_paused_over_a_restart_and_resumes(db_url, shared_resources, tokens):
    rows = [{"id": f"s{i}", "input": "slow", "output": "x", "expected": "x"} for i in range(SLOW)]
    rows += [{"id": f"f{i}", "input": "fast", "output": "x", "expected": "x"} for i in range(FAST)]
    with served(db_url, shared_resources, tokens) as call:
        made = call("alice", "POST", "/evaluators", json={
            "name": "runaway", "type": "code", "config": {"language": "python", "code": RUNAWAY, "timeout": LIMIT_MS}})
        evaluator = made.json()["data"]["id"]
        task = call("alice", "POST", "/tasks", json={"name": "t", "evaluators": [{"evaluatorId": evaluator}],
                                                     "dataset": {"rows": rows}}).json()["data"]["id"]
        run_id = call("alice", "POST", f"/tasks/{task}/runs").json()["data"]["id"]
        wait_for(lambda: call("alice", "GET", f"/runs/{run_id}").json()["data"]["paused"], "the evaluator pauses")
        # a few time limits more: nothing else of it goes to the sandbox, and the run does not end
        time.sleep(3 * LIMIT_MS / 1000)
        run = call("alice", "GET", f"/runs/{run_id}").json()["data"]
        assert run["status"] == "running", run
        assert run["paused"] == [{"evaluatorId": evaluator, "name": "runaway", "pausedAt": run["paused"][0]["pausedAt"],
                                  "timeouts": PAUSE_AFTER}], run
        stored = results(call, run_id)
        assert [r["sampleId"] for r in stored] == ["s0", "s1", "s2"], stored
        assert {r["error"] for r in stored} == {"timeout"} and run["done"] == PAUSE_AFTER, (stored, run)
        live = call("alice", "GET", f"/pages/api/runs/{run_id}/live").json()
        assert live["data"]["paused"][0]["evaluatorId"] == evaluator, live
    with served(db_url, shared_resources, tokens) as call:  # a restart while paused
        time.sleep(3 * LIMIT_MS / 1000)
        run = call("alice", "GET", f"/runs/{run_id}").json()["data"]
        assert run["status"] == "running" and run["done"] == PAUSE_AFTER and run["paused"], run
        refused = call("bob", "POST", f"/runs/{run_id}/resume")
        assert refused.status_code == 403 and "alice" in refused.json()["message"], refused.text
        resumed = call("alice", "POST", f"/runs/{run_id}/resume")
        assert resumed.status_code == 200 and resumed.json()["data"]["paused"] == [], resumed.text
        wait_for(lambda: call("alice", "GET", f"/runs/{run_id}").json()["data"]["status"] == "completed",
                 "the resumed run completes")
        stored = results(call, run_id)
        assert sorted(r["sampleId"] for r in stored) == sorted(r["id"] for r in rows), stored  # each once
        by_sample = {r["sampleId"]: r for r in stored}
        assert all(by_sample[f"s{i}"]["error"] == "timeout" for i in range(SLOW)), stored
        assert all(by_sample[f"f{i}"]["status"] == "passed" for i in range(FAST)), stored
        run = call("alice", "GET", f"/runs/{run_id}").json()["data"]
        assert run["done"] == run["total"] == SLOW + FAST and run["summary"]["evaluators"][0]["error"] == SLOW, run
        again = call("alice", "POST", f"/runs/{run_id}/resume")
        assert again.status_code == 409, again.text


def test_a_paused_run_can_be_cancelled_and_a_run_without_timeouts_never_pauses(db_url, shared_resources, tokens):
    with served(db_url, shared_resources, tokens) as call:
        made = call("alice", "POST", "/evaluators", json={
            "name": "runaway", "type": "code", "config": {"language": "python", "code": RUNAWAY, "timeout": LIMIT_MS}})
        evaluator = made.json()["data"]["id"]
        slow = call("alice", "POST", "/tasks", json={"name": "slow", "evaluators": [{"evaluatorId": evaluator}],
                                                     "dataset": {"rows": [{"id": f"s{i}", "input": "slow",
                                                                           "output": "x"} for i in range(8)]}})
        run_id = call("alice", "POST", f"/tasks/{slow.json()['data']['id']}/runs").json()["data"]["id"]
        wait_for(lambda: call("alice", "GET", f"/runs/{run_id}").json()["data"]["paused"], "the evaluator pauses")
        cancelled = call("alice", "POST", f"/runs/{run_id}/cancel")
        assert cancelled.status_code == 200 and cancelled.json()["data"]["status"] == "cancelled", cancelled.text
        assert call("alice", "POST", f"/runs/{run_id}/resume").status_code == 409
        fast = call("alice", "POST", "/tasks", json={"name": "fast", "evaluators": [{"evaluatorId": evaluator}],
                                                     "dataset": {"rows": [{"id": f"f{i}", "input": "fast",
                                                                           "output": "x", "expected": "x"}
                                                                          for i in range(8)]}})
        run_id = call("alice", "POST", f"/tasks/{fast.json()['data']['id']}/runs").json()["data"]["id"]
        wait_for(lambda: call("alice", "GET", f"/runs/{run_id}").json()["data"]["status"] == "completed",
                 "the run completes")
        assert call("alice", "GET", f"/runs/{run_id}").json()["data"]["paused"] == []
