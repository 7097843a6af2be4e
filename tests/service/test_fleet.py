"""Three ``assay serve`` processes, each in its own working directory, share one real
PostgreSQL and nothing else. A run's slices are spread over them; one is killed (SIGKILL)
while it holds a slice, and the two others take its slices over once the lease expires (two
seconds here, through ``ASSAY_RUN_LEASE_S``): the run completes with exactly one result per
(sample, evaluator). A token revoked through the database stops working on all three."""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Iterator

import psycopg
import pytest
from served import Server, assay

pytestmark = [pytest.mark.postgres, pytest.mark.slow]

SLOW = ("import time\n\ndef evaluate(input, output, expected, metadata):\n"
        "    time.sleep(0.01)\n    return {'passed': output == expected}\n")
ROWS = 240


@pytest.fixture(scope="module")
def fleet(pg_server, tmp_path_factory) -> Iterator[tuple[list[Server], str, str, dict[str, str]]]:
    url = pg_server.new_database()
    env = {**os.environ, "ASSAY_DATABASE_URL": url, "ASSAY_JUDGE_CACHE": "off", "ASSAY_RUN_LEASE_S": "2",
           "ASSAY_RUN_SLICE_SIZE": "8", "ASSAY_QUEUE_POLL_MS": "100"}
    admin = tmp_path_factory.mktemp("cli")
    assay("users", "create", "alice", env=env, cwd=admin)
    token = assay("tokens", "create", "alice", env=env, cwd=admin).strip().splitlines()[-1]
    servers = [Server(tmp_path_factory.mktemp(f"server{n}"), env) for n in range(3)]
    try:
        for server in servers:
            server.wait_ready(token)
        yield servers, token, url, env
    finally:
        for server in servers:
            server.stop()


def slices(url: str, run_id: str) -> list[tuple[str, str | None, int]]:
    with psycopg.connect(url.replace("postgresql+psycopg", "postgresql")) as conn:
        return conn.execute("SELECT state, holder, attempts FROM run_slices WHERE run_id = %s", (run_id,)).fetchall()


def test_a_killed_servers_slices_are_taken_over_and_every_result_is_stored_once(fleet):
    servers, token, url, _env = fleet
    victim = servers[2]
    with servers[0].client(token) as client:
        code = client.post("/evaluators", json={"name": "slow", "type": "code",
                                                "config": {"language": "python", "code": SLOW}}).json()["data"]
        preset = next(p for p in client.get("/evaluators/presets").json()["data"]
                      if p["config"]["presetType"] == "exact_match")
        rows = [{"id": f"s{i}", "input": "q", "output": "a", "expected": "a" if i % 4 else "b"} for i in range(ROWS)]
        task = client.post("/tasks", json={"name": "fleet", "dataset": {"rows": rows},
                                           "evaluators": [{"evaluatorId": code["id"]}, {"evaluatorId": preset["id"]}]})
        run_id = client.post(f"/tasks/{task.json()['data']['id']}/runs").json()["data"]["id"]

        deadline = time.monotonic() + 120
        mark = f":{victim.process.pid}:"
        while not any(state == "leased" and mark in (holder or "") for state, holder, _ in slices(url, run_id)):
            assert time.monotonic() < deadline, slices(url, run_id)
            time.sleep(0.02)
        victim.process.send_signal(signal.SIGKILL)
        victim.process.wait(timeout=10)

        while (run := client.get(f"/runs/{run_id}").json()["data"])["status"] not in ("completed", "failed"):
            assert time.monotonic() < deadline, run
            time.sleep(0.2)
        assert run["status"] == "completed" and run["done"] == run["total"] == 2 * ROWS, run
        items = [item for offset in range(0, 2 * ROWS, 1000) for item in client.get(
            f"/runs/{run_id}/results", params={"limit": 1000, "offset": offset}).json()["data"]["items"]]
    pairs = [(r["sampleId"], r["evaluatorId"]) for r in items]
    assert len(pairs) == len(set(pairs)) == 2 * ROWS
    assert run["summary"]["samples"] == ROWS and run["summary"]["samplesFailed"] == ROWS // 4
    final = slices(url, run_id)
    assert all(state == "done" for state, _, _ in final)
    taken_over = [holder for _, holder, attempts in final if attempts > 1]
    assert taken_over and not any(mark in holder for holder in taken_over)  # the victim's slice, finished by another
    survivors = {holder.split(":")[1] for _, holder, _ in final}
    assert {str(servers[0].process.pid), str(servers[1].process.pid)} <= survivors


def test_a_revoked_token_stops_working_on_every_server_within_five_seconds(fleet):
    servers, _token, _url, env = fleet
    live = [server for server in servers if server.process.poll() is None]
    token = assay("tokens", "create", "alice", env=env, cwd=live[0].cwd).strip().splitlines()[-1]
    for server in live:  # every server keeps the answer now
        with server.client(token) as client:
            assert client.get("/evaluators").status_code == 200
    assay("tokens", "revoke", token, env=env, cwd=live[0].cwd)
    deadline = time.monotonic() + 5
    pending = list(live)
    while pending:
        assert time.monotonic() < deadline, "a server still accepts the revoked token after 5 s"
        for server in list(pending):
            with server.client(token) as client:
                if client.get("/evaluators").status_code == 401:
                    pending.remove(server)
        time.sleep(0.05)
