"""A server that stops mid-run stops at once (issue 36): the sandbox's evaluations in flight are
killed, not waited out, none of their answers is stored, and the next start grades those samples
again, each result stored once.

Through uvicorn on 127.0.0.1 with the server's own sandbox, as ``assay serve`` runs."""

from __future__ import annotations

import logging
import os
import time
from pathlib import Path

import pytest
from test_sandbox_share import Live, _user_id, wait_for

SLEEPER = ("import time\n\ndef evaluate(input, output, expected, metadata):\n"
           "    time.sleep(3)\n    return {'passed': output == expected}\n")
ROWS = 4


def our_zygotes() -> list[int]:
    """Python sandbox zygotes this process started and that still live."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:  # not a process, or gone
            continue
        state, ppid = stat.rsplit(")", 1)[1].split()[:2]
        if b"assay.sandbox.python.zygote" in cmdline and int(ppid) == os.getpid() and state != "Z":
            found.append(int(entry.name))
    return found


@pytest.mark.solo  # a bound on time: once 3.5 s beside the parallel suite, 0.2-0.6 s alone
def test_a_stop_kills_the_evaluations_in_flight_and_the_next_start_grades_them_once(db_url, caplog):
    others = set(our_zygotes())  # a sandbox another test of this process keeps (a session's)
    live = Live(db_url)
    tokens = live.tokens
    try:
        evaluator = live.evaluator("alice", SLEEPER, timeout_ms=8000)
        task = live.call("alice", "POST", "/api/v1/tasks", json={
            "name": "sleepy", "evaluators": [{"evaluatorId": evaluator}],
            "dataset": {"rows": [{"id": f"r{i}", "output": "x", "expected": "x"} for i in range(ROWS)]}})
        run = live.call("alice", "POST", f"/api/v1/tasks/{task.json()['data']['id']}/runs").json()["data"]["id"]
        alice = _user_id(live, "alice")
        wait_for(lambda: live.gate().in_flight().get(alice, 0) > 0, "alice's run reaches the sandbox")
        time.sleep(0.3)
    finally:
        caplog.set_level(logging.INFO, logger="assay.server")
        began = time.perf_counter()
        live.close()
        took = time.perf_counter() - began
    # her sleeps had ~2.7 s to go: a stop that waited for them (and then for the sandbox's
    # close) took that and more
    steps = [r.getMessage() for r in caplog.records if r.getMessage().startswith("stopping took")]
    assert took < 2.0, (took, steps)  # the server's own breakdown, when its stop took over a second
    # none left (one being started in reserve at the stop is stopped by its thread once started)
    wait_for(lambda: set(our_zygotes()) <= others, "the sandbox's processes end", limit_s=10)
    again = Live(db_url, tokens)
    try:
        wait_for(lambda: again.call("alice", "GET", f"/api/v1/runs/{run}").json()["data"]["status"] == "completed",
                 "the run completes after the restart")
        results = again.call("alice", "GET", f"/api/v1/runs/{run}/results", params={"limit": 100}).json()["data"]
        assert sorted(r["sampleId"] for r in results["items"]) == [f"r{i}" for i in range(ROWS)], results
        assert {(r["status"], r["error"]) for r in results["items"]} == {("passed", None)}, results
        done = again.call("alice", "GET", f"/api/v1/runs/{run}").json()["data"]
        assert done["done"] == done["total"] == ROWS, done
    finally:
        again.close()
