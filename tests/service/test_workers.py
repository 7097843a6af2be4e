"""``assay serve --workers 2``: two processes answer one database. A change of an evaluator
reaches the graders both keep in memory within the change poll; task runs started through either
are graded once, from the run queue both share; a cancel written through either stops a run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx2 as httpx
import pytest
from pg_server import free_port

FLIP = ("def evaluate(input, output, expected, metadata):\n"
        "    return {'passed': (output == expected) == FLAG}\n")
SLOW = ("import time\n\ndef evaluate(input, output, expected, metadata):\n"
        "    time.sleep(0.05)\n    return {'passed': True}\n")


def assay(*args: str, env: dict[str, str]) -> str:
    done = subprocess.run([sys.executable, "-m", "assay.cli.main", *args], env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[tuple[httpx.Client, Path]]:
    tmp = tmp_path_factory.mktemp("workers")
    env = {**os.environ, "ASSAY_DATABASE_URL": f"sqlite:///{tmp / 'assay.db'}", "ASSAY_JUDGE_CACHE": "off"}
    assay("users", "create", "alice", env=env)
    token = assay("tokens", "create", "alice", env=env).strip().splitlines()[-1]
    port = free_port()
    log = tmp / "server.log"
    with open(log, "ab") as out:
        process = subprocess.Popen([sys.executable, "-m", "assay.cli.main", "serve", "--port", str(port),
                                    "--workers", "2", "--log-level", "warning"],
                                   env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}/api/v1", timeout=30,
                          headers={"Authorization": f"Bearer {token}"}) as client:
            deadline = time.monotonic() + 60
            while True:
                assert process.poll() is None, log.read_text()[-3000:]
                assert time.monotonic() < deadline, log.read_text()[-3000:]
                try:
                    if client.get("/evaluators").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                time.sleep(0.1)
            yield client, log
    finally:
        if process.poll() is None:
            os.kill(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.kill(process.pid, signal.SIGKILL)
                process.wait(timeout=10)


def verdicts(client: httpx.Client, evaluator_id: str, n: int = 30) -> set[object]:
    """The ``passed`` of ``n`` tests on new connections, which the two processes share out."""
    seen = set()
    for _ in range(n):
        with httpx.Client(base_url=client.base_url, headers=client.headers, timeout=30) as fresh:
            reply = fresh.post(f"/evaluators/{evaluator_id}/test", json={"input": "q", "output": "a", "expected": "a"})
        seen.add(reply.json()["data"]["passed"] if reply.status_code == 200 else reply.status_code)
    return seen


def test_an_evaluator_change_reaches_every_process(server):
    client, _log = server
    made = client.post("/evaluators", json={"name": "flip", "type": "code",
                                            "config": {"language": "python", "code": "FLAG = True\n" + FLIP}})
    evaluator_id = made.json()["data"]["id"]
    assert verdicts(client, evaluator_id) == {True}
    changed = client.put(f"/evaluators/{evaluator_id}", json={"config": {"language": "python",
                                                                          "code": "FLAG = False\n" + FLIP}})
    assert changed.status_code == 200
    settle(client, evaluator_id, {False})
    time.sleep(POLLS_S)  # the rounds that agreed may all have come from one process
    assert verdicts(client, evaluator_id) == {False}
    assert client.delete(f"/evaluators/{evaluator_id}").status_code == 200
    settle(client, evaluator_id, {404})
    time.sleep(POLLS_S)
    assert verdicts(client, evaluator_id, 10) == {404}


# two of the change counters' one-second polls: by then every process has read the change
POLLS_S = 2.0


def settle(client: httpx.Client, evaluator_id: str, expected: set[object]) -> None:
    """Wait (5 s at most) until tests of the evaluator answer ``expected`` on both processes:
    each reads the database's change counters every second. Which process answers is the
    kernel's choice, so one round of agreeing answers may all come from one of them: three
    rounds in a row (12 connections) are asked for."""
    deadline = time.monotonic() + 5
    agreed = 0
    while agreed < 3:
        if verdicts(client, evaluator_id, 4) == expected:
            agreed += 1
            continue
        agreed = 0  # an old answer: fine within 5 s of the change, a failure after
        assert time.monotonic() < deadline, "the change did not reach every process within 5 s"


def wait_for(client: httpx.Client, run_id: str, states: tuple[str, ...], limit_s: float = 90) -> dict:
    deadline = time.monotonic() + limit_s
    while (run := client.get(f"/runs/{run_id}").json()["data"])["status"] not in states:
        assert time.monotonic() < deadline, run
        time.sleep(0.1)
    return run


def test_runs_started_through_either_process_are_graded_once(server):
    client, _log = server
    preset = next(p for p in client.get("/evaluators/presets").json()["data"]
                  if p["config"]["presetType"] == "exact_match")
    rows = [{"id": f"s{i}", "input": "q", "output": "a", "expected": "a" if i % 3 else "b"} for i in range(40)]
    task = client.post("/tasks", json={"name": "t", "evaluators": [{"evaluatorId": preset["id"]}],
                                       "dataset": {"rows": rows}}).json()["data"]
    run_ids = []
    for _ in range(6):
        with httpx.Client(base_url=client.base_url, headers=client.headers, timeout=30) as fresh:
            run_ids.append(fresh.post(f"/tasks/{task['id']}/runs").json()["data"]["id"])
    for run_id in run_ids:
        run = wait_for(client, run_id, ("completed", "failed", "cancelled"))
        assert run["status"] == "completed" and run["done"] == 40
        items = client.get(f"/runs/{run_id}/results", params={"limit": 1000}).json()["data"]["items"]
        assert len(items) == len({r["sampleId"] for r in items}) == 40
        assert sum(not r["passed"] for r in items) == 14


def test_a_cancel_through_either_process_stops_the_run(server):
    client, _log = server
    slow = client.post("/evaluators", json={"name": "slow", "type": "code",
                                            "config": {"language": "python", "code": SLOW}}).json()["data"]
    rows = [{"id": f"s{i}", "input": "q", "output": "a"} for i in range(400)]
    task = client.post("/tasks", json={"name": "slow", "evaluators": [{"evaluatorId": slow["id"]}],
                                       "dataset": {"rows": rows}}).json()["data"]
    run_id = client.post(f"/tasks/{task['id']}/runs").json()["data"]["id"]
    wait_for(client, run_id, ("running",))
    for _ in range(4):  # new connections: the cancel may land on either process
        with httpx.Client(base_url=client.base_url, headers=client.headers, timeout=30) as fresh:
            reply = fresh.post(f"/runs/{run_id}/cancel")
        if reply.status_code == 409:
            break
        assert reply.status_code == 200 and reply.json()["data"]["status"] == "cancelled"
    time.sleep(1.5)  # longer than a chunk: a grading process that missed the cancel would go on
    first = client.get(f"/runs/{run_id}").json()["data"]
    time.sleep(1.0)
    later = client.get(f"/runs/{run_id}").json()["data"]
    assert first["status"] == later["status"] == "cancelled"
    assert later["done"] == first["done"] < 400
