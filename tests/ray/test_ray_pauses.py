"""A run graded on Ray (``ASSAY_RUN_ENGINE=ray``) pauses a runaway evaluator and stops with its
server as a run graded by the server's own sandbox does (issue 36, item 6).

A code evaluator that times out on ``run_pause_after_timeouts`` samples in a row is paused in its
run: the run stays active and says so, its other evaluator goes on, a restart keeps the pause, a
resume grades what was left with the code the run started with (not the evaluator's code edited
since), each (sample, evaluator) stored once; a paused run can be cancelled. A server that stops
while Ray grades its slice kills its actors at once: nothing they were grading is stored, the
slice goes back to the queue, the actors' code permits go back to the cluster's book, and the
next server grades the rest, each sample once.

On a local Ray started here for the module; the server through the app (a ``TestClient``) and
under uvicorn on 127.0.0.1 (``Live``), on SQLite."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "service"))
from service_support import seed_users  # noqa: E402
from test_sandbox_share import Live  # noqa: E402
from test_sandbox_share import wait_for as waited  # noqa: E402

from assay.service.ray_permits import permits_actor  # noqa: E402
from assay.settings import Settings  # noqa: E402
from assay.store import Database  # noqa: E402
from assay.store import runs as run_rows  # noqa: E402
from assay.store.models import RunSlice, SliceState  # noqa: E402

pytestmark = [pytest.mark.ray, pytest.mark.slow]

RUNAWAY = ("def evaluate(input, output, expected, metadata):\n"
           "    if input == 'slow':\n        while True:\n            pass\n"
           "    return {'passed': output == expected}\n")
EDITED = "def evaluate(input, output, expected, metadata):\n    return {'passed': False, 'reason': 'edited'}\n"
SLEEPER = ("import time\n\ndef evaluate(input, output, expected, metadata):\n"
           "    time.sleep(metadata.get('pause', 0))\n    return {'passed': output == expected}\n")
PAUSE_AFTER = 3
LIMIT_MS = 400
SLOW, FAST = 4, 8


@pytest.fixture(scope="module", autouse=True)
def local_ray() -> Iterator[None]:
    """One local Ray for the module's servers, which find it connected and leave it running."""
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=os.cpu_count() or 1, include_dashboard=False, log_to_driver=False)
    try:
        yield
    finally:
        ray.shutdown()


def wait_for(condition, what: str) -> None:
    waited(condition, what, limit_s=90)  # a bound against hanging, not a measure


@contextmanager
def served(db_url: str, tokens: dict[str, str]) -> Iterator:
    """The app grading on Ray (a server's life: leaving the block is its stop); ``call(user, ...)``."""
    from fastapi.testclient import TestClient

    from assay.server import create_app

    settings = Settings(database_url=db_url, run_engine="ray", run_pause_after_timeouts=PAUSE_AFTER, run_slots=1,
                        run_slice_size=6, queue_poll_ms=50)
    with TestClient(create_app(settings)) as client:
        def call(user: str, method: str, path: str, **kwargs):
            url = path if path.startswith("/pages/") else "/api/v1" + path
            return client.request(method, url, headers={"Authorization": f"Bearer {tokens[user]}"}, **kwargs)
        yield call


def run_of(call, run_id: str) -> dict:
    return call("alice", "GET", f"/runs/{run_id}").json()["data"]


def results(call, run_id: str) -> dict[tuple[str, str], dict]:
    """The run's results by (sample, evaluator); each pair stored once."""
    items = call("alice", "GET", f"/runs/{run_id}/results", params={"limit": 1000}).json()["data"]["items"]
    found = {(r["sampleId"], r["evaluatorId"]): r for r in items}
    assert len(found) == len(items), items
    return found


def test_a_runaway_evaluator_on_ray_pauses_keeps_its_code_resumes_and_a_paused_run_cancels(tmp_path):
    db_url = f"sqlite:///{tmp_path / 'assay.db'}"
    tokens = seed_users(db_url)
    rows = [{"id": f"s{i}", "input": "slow", "output": "x", "expected": "x"} for i in range(SLOW)]
    rows += [{"id": f"f{i}", "input": "fast", "output": "x", "expected": "x"} for i in range(FAST)]
    with served(db_url, tokens) as call:
        code = call("alice", "POST", "/evaluators", json={
            "name": "runaway", "type": "code", "config": {"language": "python", "code": RUNAWAY, "timeout": LIMIT_MS}})
        code = code.json()["data"]["id"]
        exact = {p["config"]["presetType"]: p["id"]
                 for p in call("alice", "GET", "/evaluators/presets").json()["data"]}["exact_match"]
        task = call("alice", "POST", "/tasks", json={
            "name": "t", "evaluators": [{"evaluatorId": code}, {"evaluatorId": exact}],
            "dataset": {"rows": rows}}).json()["data"]["id"]
        run_id = call("alice", "POST", f"/tasks/{task}/runs").json()["data"]["id"]
        wait_for(lambda: run_of(call, run_id)["paused"], "the runaway evaluator pauses")
        # exact_match grades every sample; the paused evaluator's samples wait, and the run with them
        wait_for(lambda: run_of(call, run_id)["done"] == PAUSE_AFTER + SLOW + FAST, "the other evaluator ends")
        time.sleep(3 * LIMIT_MS / 1000)
        run = run_of(call, run_id)
        assert run["status"] == "running" and run["done"] == PAUSE_AFTER + SLOW + FAST, run
        assert run["paused"] == [{"evaluatorId": code, "name": "runaway", "pausedAt": run["paused"][0]["pausedAt"],
                                  "timeouts": PAUSE_AFTER}], run
        stored = results(call, run_id)
        assert sorted(s for s, e in stored if e == code) == ["s0", "s1", "s2"], stored
        assert {stored[s, code]["error"] for s in ("s0", "s1", "s2")} == {"timeout"}, stored
        assert all(stored[r["id"], exact]["status"] == "passed" for r in rows), stored
        live = call("alice", "GET", f"/pages/api/runs/{run_id}/live").json()  # what the run page's banner shows
        assert live["data"]["paused"][0]["evaluatorId"] == code, live
        # a second run pauses too, and is cancelled while paused
        other = call("alice", "POST", f"/tasks/{task}/runs").json()["data"]["id"]
        wait_for(lambda: run_of(call, other)["paused"], "the second run's evaluator pauses")
        cancelled = call("alice", "POST", f"/runs/{other}/cancel")
        assert cancelled.status_code == 200 and cancelled.json()["data"]["status"] == "cancelled", cancelled.text
        assert call("alice", "POST", f"/runs/{other}/resume").status_code == 409
        # the evaluator is edited while the first run is paused: the run keeps the code it started with
        edited = call("alice", "PUT", f"/evaluators/{code}", json={"config": {"language": "python", "code": EDITED}})
        assert edited.status_code == 200, edited.text
    with served(db_url, tokens) as call:  # a restart while paused: a new server, new Ray actors
        time.sleep(3 * LIMIT_MS / 1000)
        run = run_of(call, run_id)
        assert run["status"] == "running" and run["done"] == PAUSE_AFTER + SLOW + FAST and run["paused"], run
        resumed = call("alice", "POST", f"/runs/{run_id}/resume")
        assert resumed.status_code == 200 and resumed.json()["data"]["paused"] == [], resumed.text
        wait_for(lambda: run_of(call, run_id)["status"] == "completed", "the resumed run completes")
        stored = results(call, run_id)
        assert set(stored) == {(r["id"], e) for r in rows for e in (code, exact)}, stored  # each once
        assert all(stored[f"s{i}", code]["error"] == "timeout" for i in range(SLOW)), stored
        assert all(stored[f"f{i}", code]["status"] == "passed" for i in range(FAST)), stored  # not EDITED's
        run = run_of(call, run_id)
        assert run["done"] == run["total"] == 2 * (SLOW + FAST), run
        assert call("alice", "POST", f"/runs/{run_id}/resume").status_code == 409


def our_sandboxes() -> set[int]:
    """Python sandbox processes (zygotes and their children) descended from this process: the
    servers' own sandboxes, and those of the Ray actors (Ray's processes are this one's)."""
    parents: dict[int, int] = {}
    sandboxes = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat, cmdline = (entry / "stat").read_text(), (entry / "cmdline").read_bytes()
        except OSError:  # not a process, or gone
            continue
        state, ppid = stat.rsplit(")", 1)[1].split()[:2]
        if state != "Z":
            parents[int(entry.name)] = int(ppid)
            if b"assay.sandbox.python.zygote" in cmdline:
                sandboxes.add(int(entry.name))

    def ours(pid: int) -> bool:
        while pid > 1:
            pid = parents.get(pid, 0)
            if pid == os.getpid():
                return True
        return False

    return {pid for pid in sandboxes if ours(pid)}


def alive(pids: set[int]) -> set[int]:
    """Those of ``pids`` that still run."""
    found = set()
    for pid in pids:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:  # gone
            continue
        if state != "Z":
            found.add(pid)
    return found


def described(pids: set[int]) -> list[str]:
    """Each of ``pids`` with its parent and command line, for a failure's message."""
    found = []
    for pid in sorted(pids):
        try:
            ppid = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1]
            found.append(f"{pid} (parent {ppid}): {Path(f'/proc/{pid}/cmdline').read_bytes()[:160]!r}")
        except OSError:
            continue
    return found


@pytest.mark.solo  # it times the stop against the evaluations it must not wait for
def test_a_stop_while_ray_grades_stores_nothing_after_it_and_the_next_server_grades_the_rest(tmp_path):
    import ray

    db_url = f"sqlite:///{tmp_path / 'assay.db'}"
    settings = {"run_engine": "ray", "run_slots": 1, "run_slice_size": 4}  # leases of 30 s
    pauses = [0] * 4 + [3] * 4 + [0] * 4  # the second slice sleeps: 2 of alice's evaluations at once, 6 s
    rows = [{"id": f"r{i:02}", "output": "x", "expected": "x", "metadata": {"pause": p}} for i, p in enumerate(pauses)]
    others = our_sandboxes()  # a sandbox another test of this process keeps (a session's)
    live = Live(db_url, **settings)
    tokens = live.tokens
    database = Database(db_url)
    sandboxes: set[int] = set()

    def stored(run_id: str) -> int:
        with database.session() as session:
            return run_rows.count_results(session, run_id)

    try:
        evaluator = live.evaluator("alice", SLEEPER, timeout_ms=8000)
        task = live.call("alice", "POST", "/api/v1/tasks", json={
            "name": "sleepy", "evaluators": [{"evaluatorId": evaluator}], "dataset": {"rows": rows}})
        run = live.call("alice", "POST", f"/api/v1/tasks/{task.json()['data']['id']}/runs").json()["data"]["id"]
        wait_for(lambda: stored(run) == 4, "the first slice is graded")
        gauge = "assay_ray_evaluations_in_flight{"
        wait_for(lambda: gauge in live.call("alice", "GET", "/metrics").text, "the second slice's code runs on Ray")
        time.sleep(0.3)
        sandboxes = our_sandboxes() - others  # the run actor's, with the evaluations in flight
    finally:
        began = time.perf_counter()
        live.close()
        took = time.perf_counter() - began
    try:
        # the sleeps in flight had more than 5 s to go: a stop that waited for them took that
        assert took < 3.0, took
        assert stored(run) == 4  # what the killed actor was grading: not stored
        assert sandboxes, "the run actor's sandbox was not found"
        book = permits_actor()  # the killed actor's permits given back, not left to their lease
        waited(lambda: not ray.get(book.in_flight.remote()), "alice's permits are given back", limit_s=5)
        deadline = time.monotonic() + 10  # a bound against hanging: they end with their actor
        while (left := alive(sandboxes)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not left, f"sandbox processes left after the stop: {described(left)}"
        with database.session() as session:
            slices = {(s.start, s.state, s.holder if s.state != SliceState.DONE else None)
                      for s in session.query(RunSlice).filter_by(run_id=run)}
        assert slices == {(0, SliceState.DONE, None), (4, SliceState.PENDING, None),
                          (8, SliceState.PENDING, None)}, slices  # given back, to the next server
        again = Live(db_url, tokens, **settings)
        try:
            wait_for(lambda: again.call("alice", "GET", f"/api/v1/runs/{run}").json()["data"]["status"] == "completed",
                     "the run completes on the next server")
            items = again.call("alice", "GET", f"/api/v1/runs/{run}/results", params={"limit": 100}).json()["data"]
            assert sorted(r["sampleId"] for r in items["items"]) == [r["id"] for r in rows], items  # each once
            assert {(r["status"], r["error"]) for r in items["items"]} == {("passed", None)}, items
            done = again.call("alice", "GET", f"/api/v1/runs/{run}").json()["data"]
            assert done["done"] == done["total"] == len(rows), done
        finally:
            again.close()
    finally:
        database.dispose()
