"""Two users sharing one server: the sandbox gate serves them in turn and caps each; a one-sample
run of one user is graded while another user's large run goes on, not after it; a test of one
user is answered while another user's slow tests are still running."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager

import pytest
from in_flight import STAMPED, peak, stamps
from service_support import make_api
from sqlalchemy import select

from assay.core.interfaces import CodeBatch
from assay.service.fairness import FairCodeRunner, FairGate, acting_for
from assay.store import Database
from assay.store.models import Run, RunSlice
from assay.store.users import get_user

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


class Admissions:
    """Records, around the app's gate, when each call of each user queues, is admitted and ends,
    and how many samples each sends to the sandbox (so how deep each worker's share was)."""

    def __init__(self, api) -> None:
        service = api.client.app.state.service
        database = Database(api.database_url)
        with database.session() as session:
            self._names = {get_user(session, name).id: name for name in api.tokens}
        database.dispose()
        self.events: list[tuple[str, str, int, int]] = []  # (what, user, ticket, user's calls in flight)
        self.depth: dict[int, int] = {}  # ticket -> samples per worker it sent
        self.samples: dict[str, int] = {}  # user -> samples sent to the sandbox
        self._busy: dict[str, int] = {}
        self._lock = threading.Lock()
        self._tickets = iter(range(1 << 30))
        self._current = threading.local()
        self._slot, self._inner = service.gate.slot, service.grading.resources.code_runner.inner
        service.gate.slot = self.slot
        service.grading.resources.code_runner.inner = self

    def call(self, request):
        self._sent(1)
        return self._inner.call(request)

    def call_batch(self, batch):
        self._sent(len(batch.args))
        return self._inner.call_batch(batch)

    def _sent(self, samples: int) -> None:
        with self._lock:
            self.depth[self._current.ticket] = -(-samples // self._current.weight)
            self.samples[self._current.user] = self.samples.get(self._current.user, 0) + samples

    def _note(self, what: str, user: str, ticket: int, change: int = 0) -> None:
        with self._lock:
            self.events.append((what, user, ticket, self._busy.get(user, 0)))
            self._busy[user] = self._busy.get(user, 0) + change

    @contextmanager
    def slot(self, user: str, weight: int = 1) -> Iterator[None]:
        ticket, user = next(self._tickets), self._names.get(user, user)
        self._note("queued", user, ticket)
        with self._slot(user, weight):
            self._current.ticket, self._current.weight, self._current.user = ticket, weight, user
            self._note("admitted", user, ticket, +1)
            try:
                yield
            finally:
                self._note("ended", user, ticket, -1)

    def admitted(self, user: str) -> int:
        return sum(1 for what, who, _, _ in self.events if what == "admitted" and who == user)

    def waits(self, waiter: str, other: str) -> list[tuple[int, int]]:
        """For each call of ``waiter`` queued while ``other`` had calls in flight and ``waiter``
        none: (calls of ``other`` admitted before it, the deepest share of a worker among the
        calls of ``other`` it waited for: those in flight when it came and those admitted)."""
        found: list[tuple[int, int]] = []
        for n, (what, user, ticket, busy) in enumerate(self.events):
            if what != "queued" or user != waiter or busy:
                continue
            running = {t for w, u, t, _ in self.events[:n] if u == other and w == "admitted"}
            running -= {t for w, u, t, _ in self.events[:n] if u == other and w == "ended"}
            if not running:
                continue
            admitted = next(m for m, event in enumerate(self.events) if event[:3] == ("admitted", waiter, ticket))
            passed = {t for w, u, t, _ in self.events[n:admitted] if u == other and w == "admitted"}
            found.append((len(passed), max(self.depth.get(t, 1) for t in running | passed)))
        return found


def code_evaluator(api, user: str) -> str:
    return api.call("POST", "/evaluators", user, json={"name": "slow", "type": "code",
                                                      "config": {"language": "python", "code": SLOW}}).json()["data"]["id"]


def wait_for(condition, what: str) -> None:
    deadline = time.monotonic() + 120  # a bound against hanging, not a measure
    while not condition():
        assert time.monotonic() < deadline, what
        time.sleep(0.005)


def test_a_test_is_answered_while_another_users_slow_tests_run(api):
    admissions = Admissions(api)
    alice, bob = code_evaluator(api, "alice"), code_evaluator(api, "bob")
    finished: list[str] = []
    lock = threading.Lock()

    def test(user: str, evaluator: str, pause: float) -> None:
        reply = api.call("POST", f"/evaluators/{evaluator}/test", user,
                         json={"input": "q", "output": "a", "expected": "a", "metadata": {"pause": pause}})
        assert reply.status_code == 200 and reply.json()["data"]["passed"] is True, reply.text
        with lock:
            finished.append(user)

    with ThreadPoolExecutor(8) as pool:
        # Two tests keep the sandbox's lanes busy (on a small machine), so the next four queue and
        # go as one batch; bob comes when that batch has reached the sandbox.
        slow = [pool.submit(test, "alice", alice, 1.0) for _ in range(2)]
        wait_for(lambda: admissions.samples.get("alice", 0) >= 2, "alice's first tests reach the sandbox")
        slow += [pool.submit(test, "alice", alice, 1.0) for _ in range(4)]
        wait_for(lambda: admissions.samples.get("alice", 0) >= 3, "alice's batch reaches the sandbox")
        quick = pool.submit(test, "bob", bob, 0)
        for future in (*slow, quick):
            future.result(timeout=120)
    # bob's test waited for one evaluation of what alice had in the sandbox, not for her batch
    waits = admissions.waits("bob", "alice")
    assert waits and all(passed <= 1 and depth == 1 for passed, depth in waits), (waits, admissions.events)
    assert "bob" in finished[:-1], finished


def test_tests_and_runs_share_the_sandbox_in_turn(api):
    """alice's run and bob's tests, both of slow code: neither waits for more than one
    evaluation of the other's when its turn comes."""
    admissions = Admissions(api)
    run = start(api, "alice", task_of(api, "alice", [{"id": f"a{i}", "output": "x", "expected": "x",
                                                      "metadata": {"pause": 0.3}} for i in range(12)]))
    bob = code_evaluator(api, "bob")
    wait_for(lambda: admissions.admitted("alice"), "alice's run reaches the sandbox")

    def test() -> None:
        reply = api.call("POST", f"/evaluators/{bob}/test", "bob",
                         json={"input": "q", "output": "b", "expected": "b", "metadata": {"pause": 0.3}})
        assert reply.status_code == 200 and reply.json()["data"]["passed"] is True, reply.text

    with ThreadPoolExecutor(4) as pool:
        for future in [pool.submit(test) for _ in range(4)]:
            future.result(timeout=120)
    wait_for(lambda: status(api, run)["status"] == "completed", "alice's run completes")
    assert status(api, run)["done"] == 12
    for waiter, other in (("bob", "alice"), ("alice", "bob")):
        waits = admissions.waits(waiter, other)
        assert all(passed <= 1 and depth == 1 for passed, depth in waits), (waiter, waits, admissions.events)
    # they did contend: one of them came while the other held the sandbox
    assert admissions.waits("bob", "alice") or admissions.waits("alice", "bob"), admissions.events


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="a cap below the sandbox's workers needs two workers")
def test_a_batch_piece_keeps_a_user_within_a_cap_below_the_workers(shared_resources):
    """The sandbox has a worker per core; with a cap of one, no piece of alice's batch spreads
    over more than one of them (counted from inside the sandbox); at the workers' count, pieces
    spread over every worker."""
    slots = os.cpu_count() or 1
    batch = CodeBatch("python", STAMPED, [["q", "a", "a", {"pause": 0.1}] for _ in range(3 * slots)])
    for cap, most in ((1, 1), (slots, slots)):
        fair = FairCodeRunner(shared_resources.code_runner, FairGate(slots, cap), owns_inner=False)
        with acting_for("alice"):
            outcomes = fair.call_batch(batch)
        assert all(o.ok and o.value["passed"] for o in outcomes), outcomes
        assert peak(stamps(o.value["details"] for o in outcomes)) == most, cap


def test_a_user_keeps_no_more_than_their_share_while_others_wait():
    """alice alone may fill the gate (up to her cap); once bob waits, she gets no new slot
    beyond half of them while he has a call waiting."""
    gate = FairGate(slots=4, per_user=4)
    release = {user: threading.Semaphore(0) for user in ("alice", "bob")}
    seen: list[tuple[str, int, bool]] = []  # (who was admitted, alice's in flight, bob waiting)
    lock = threading.Lock()

    def use(user: str) -> None:
        with gate.slot(user):
            with lock:
                bob_waiting = any(q.waiting for u, q in gate._users.items() if u == "bob")
                seen.append((user, gate.in_flight().get("alice", 0), bob_waiting))
            release[user].acquire(timeout=10)

    with ThreadPoolExecutor(12) as pool:
        futures = [pool.submit(use, "alice") for _ in range(4)]
        wait_for(lambda: gate.in_flight().get("alice") == 4, "alice fills the gate")
        assert gate.share("alice") == 4  # alone: her cap (a batch's next piece is this wide)
        futures += [pool.submit(use, "bob") for _ in range(4)]
        wait_for(lambda: gate.waiting() == 4, "bob queues")
        assert gate.share("alice") == 2  # bob waits: half the slots
        futures += [pool.submit(use, "alice") for _ in range(4)]
        wait_for(lambda: gate.waiting() == 8, "alice queues more")
        for _ in range(8):  # alice's calls end one by one; bob's stay until the end
            release["alice"].release()
            time.sleep(0.02)
        wait_for(lambda: gate.in_flight().get("bob") == 2 and gate.in_flight().get("alice", 0) <= 2, "the gate settles")
        for _ in range(4):
            release["bob"].release()
        for _ in range(8):
            release["alice"].release()
        for future in futures:
            future.result(timeout=30)
    admitted_while_bob_waited = [alice for user, alice, waiting in seen[4:] if user == "alice" and waiting]
    assert all(alice <= 2 for alice in admitted_while_bob_waited), seen
    assert seen[4][0] == "bob", seen  # the first free slot went to bob
    assert sum(1 for user, _, _ in seen if user == "bob") == 4
