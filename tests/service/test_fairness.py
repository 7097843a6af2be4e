"""Two users sharing one server: the sandbox gate serves them in turn and caps each; a one-sample
run of one user is graded while another user's large run goes on, not after it; a test of one
user is answered while another user's slow tests are still running."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from service_support import make_api
from sqlalchemy import select

from assay.server.fairness import FairGate
from assay.store import Database
from assay.store.models import Run, RunSlice

SLOW = ("import time\n\ndef evaluate(input, output, expected, metadata):\n"
        "    time.sleep(float(metadata.get('pause', 0)))\n    return {'passed': output == expected}\n")


def test_the_gate_serves_users_in_turn():
    gate = FairGate(slots=1, per_user=4)
    order: list[str] = []
    release = threading.Event()
    holding = threading.Event()

    def hold() -> None:
        with gate.slot("alice"):
            holding.set()
            release.wait(10)

    def use(user: str) -> None:
        with gate.slot(user):
            order.append(user)

    first = threading.Thread(target=hold)
    first.start()
    assert holding.wait(10)
    waiting = [threading.Thread(target=use, args=("alice",)) for _ in range(3)]
    for thread in waiting:
        thread.start()
    while sum(len(q.waiting) for q in gate._users.values()) < 3:
        time.sleep(0.001)
    late = threading.Thread(target=use, args=("bob",))
    late.start()
    while sum(len(q.waiting) for q in gate._users.values()) < 4:
        time.sleep(0.001)
    release.set()
    for thread in (first, *waiting, late):
        thread.join(10)
    assert order[0] == "bob" and order[1:] == ["alice"] * 3  # bob came last, waited for one evaluation


def test_the_gate_caps_each_users_evaluations_in_flight():
    gate = FairGate(slots=3, per_user=1)
    peak: dict[str, int] = {}
    lock = threading.Lock()

    def use(user: str) -> None:
        with gate.slot(user):
            with lock:
                peak[user] = max(peak.get(user, 0), gate.in_flight().get(user, 0))
            time.sleep(0.01)

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(use, ["alice"] * 6 + ["bob"] * 6))
    assert peak == {"alice": 1, "bob": 1}


@pytest.fixture
def api(tmp_path, shared_resources):
    yield from make_api(f"sqlite:///{tmp_path / 'assay.db'}", shared_resources, run_slots=1, run_slice_size=8,
                        queue_poll_ms=50)


def task_of(api, user: str, rows: list[dict]) -> str:
    code = api.call("POST", "/evaluators", user, json={"name": "slow", "type": "code",
                                                      "config": {"language": "python", "code": SLOW}}).json()["data"]
    return api.call("POST", "/tasks", user, json={"name": "t", "evaluators": [{"evaluatorId": code["id"]}],
                                                  "dataset": {"rows": rows}}).json()["data"]["id"]


def start(api, user: str, task_id: str) -> str:
    return api.call("POST", f"/tasks/{task_id}/runs", user).json()["data"]["id"]


def status(api, run_id: str) -> dict:
    return api.call("GET", f"/runs/{run_id}").json()["data"]


def test_a_one_sample_run_is_graded_while_another_users_large_run_goes_on(api):
    big = start(api, "alice", task_of(api, "alice", [{"id": f"a{i}", "output": "x", "expected": "x",
                                                      "metadata": {"pause": 0.02}} for i in range(160)]))
    small_task = task_of(api, "bob", [{"id": "b", "output": "y", "expected": "y"}])
    deadline = time.monotonic() + 120
    while status(api, big)["done"] == 0:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    small = start(api, "bob", small_task)
    while (bob := status(api, small))["status"] != "completed":
        assert time.monotonic() < deadline, bob
        time.sleep(0.02)
    assert status(api, big)["status"] == "running"
    # One slot: the slice alice had in progress when bob's run was queued finished, and bob's
    # came next; no other slice of alice's was claimed in between.
    database = Database(api.database_url)
    with database.session() as session:
        queued = session.get(Run, small).created_at
        served = session.scalar(select(RunSlice.claimed_at).where(RunSlice.run_id == small))
        between = session.scalars(select(RunSlice.start).where(RunSlice.run_id == big, RunSlice.claimed_at > queued,
                                                               RunSlice.claimed_at < served)).all()
    database.dispose()
    assert between == [], between


@pytest.mark.xfail(strict=False, reason=(
    "known gap, timing-dependent: when alice's concurrent tests are coalesced into one batch that the "
    "sandbox spreads over every worker, the gate lets that batch (her turn) run whole before bob's one "
    "test, so bob waits for the batch, not for one evaluation. Seen once in a clean CI run; to fix in "
    "FairGate or the coalescer (split a batch into one-sample pieces while another user waits)"))
def test_a_test_is_answered_while_another_users_slow_tests_run(api):
    alice = api.call("POST", "/evaluators", "alice", json={"name": "slow", "type": "code",
                                                           "config": {"language": "python", "code": SLOW}})
    bob = api.call("POST", "/evaluators", "bob", json={"name": "quick", "type": "code",
                                                       "config": {"language": "python", "code": SLOW}})
    finished: list[str] = []
    lock = threading.Lock()

    def test(user: str, evaluator: dict, pause: float) -> None:
        reply = api.call("POST", f"/evaluators/{evaluator.json()['data']['id']}/test", user,
                         json={"input": "q", "output": "a", "expected": "a", "metadata": {"pause": pause}})
        assert reply.status_code == 200 and reply.json()["data"]["passed"] is True, reply.text
        with lock:
            finished.append(user)

    with ThreadPoolExecutor(8) as pool:
        slow = [pool.submit(test, "alice", alice, 1.5) for _ in range(4)]
        time.sleep(0.3)  # alice's tests hold the sandbox
        quick = pool.submit(test, "bob", bob, 0)
        for future in (*slow, quick):
            future.result(timeout=120)
    assert "bob" in finished[:-1]  # answered before alice's last test, not after all of them
