"""End to end, as a user does it: the CLI creates a user and a token, a live ``assay serve``
runs on a free port of 127.0.0.1, and the specification's integration flows (evaluator CRUD,
test runs) go over real HTTP; then a task run is interrupted by killing the server (SIGKILL)
and finishes after a restart with every result exactly once."""

from __future__ import annotations

import os
import signal
import time

import httpx2 as httpx
import pytest
from live_serve import Serve, assay

PY_CODE = ("import time\n\n"
           "def evaluate(input, output, expected, metadata):\n"
           "    time.sleep(metadata.get('pause', 0))\n"
           "    return {'passed': output == expected, 'reason': f'{output!r} vs {expected!r}'}\n")
NODE_CODE = ("module.exports = async function evaluate(input, output, expected, metadata) {\n"
             "  const dayjs = require('dayjs');\n"
             "  return { passed: dayjs(output).isValid(), reason: 'date check' };\n};\n")


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    """One live server for the module (a test may restart it), user alice and two of her tokens."""
    tmp_path = tmp_path_factory.mktemp("e2e")
    # A killed server's slices are taken over when their lease expires: two seconds here.
    env = {**os.environ, "ASSAY_DATABASE_URL": f"sqlite:///{tmp_path / 'assay.db'}", "ASSAY_JUDGE_CACHE": "off",
           "ASSAY_RUN_LEASE_S": "2"}
    assert assay("users", "create", "alice", env=env).returncode == 0
    tokens = []
    for label in ("main", "spare"):
        made = assay("tokens", "create", "alice", "--label", label, env=env)
        assert made.returncode == 0, made.stderr
        tokens.append(made.stdout.strip().splitlines()[-1])
        assert tokens[-1].startswith("assay_") and " " not in tokens[-1]
    server = Serve(env, tmp_path / "server.log", "--log-level", "warning").start()
    try:
        yield server, {"Authorization": f"Bearer {tokens[0]}"}, env, tokens[1]
    finally:
        server.stop()


def test_evaluator_crud_and_test_runs_over_http(setup):
    server, auth, _env, _spare = setup
    with httpx.Client(base_url=server.url + "/api/v1", headers=auth, timeout=30) as api:
        assert api.get("/evaluators").json()["data"][0]["name"] == "精确匹配"
        created = api.post("/evaluators", json={"name": "same", "description": "d", "type": "code",
                                                "config": {"language": "python", "code": PY_CODE}})
        assert created.status_code == 200, created.text
        evaluator_id = created.json()["data"]["id"]
        assert api.get(f"/evaluators/{evaluator_id}").json()["data"]["config"]["timeout"] == 5000
        tested = api.post(f"/evaluators/{evaluator_id}/test", json={"input": "q", "output": "a", "expected": "a"})
        assert tested.json() == {"code": 200, "data": {**tested.json()["data"], "passed": True, "score": 1.0,
                                                       "reason": "'a' vs 'a'", "error": None}}
        updated = api.put(f"/evaluators/{evaluator_id}", json={"description": "changed"})
        assert updated.json()["data"]["description"] == "changed"
        assert api.delete(f"/evaluators/{evaluator_id}").json()["code"] == 200
        assert api.get(f"/evaluators/{evaluator_id}").json()["code"] == 503001
        docs = httpx.get(server.url + "/openapi.json").json()
        assert "/api/v1/evaluators/{evaluator_id}/test" in docs["paths"]



def test_a_run_killed_mid_way_finishes_after_restart_with_each_result_once(setup):
    server, auth, _env, _spare = setup
    samples = 24
    rows = [{"id": f"r{i}", "input": "q", "output": "a", "expected": "a" if i % 4 else "b", "pause": 0.1}
            for i in range(samples)]
    with httpx.Client(base_url=server.url + "/api/v1", headers=auth, timeout=30) as api:
        evaluator = api.post("/evaluators", json={"name": "slow", "type": "code",
                                                  "config": {"language": "python", "code": PY_CODE}}).json()["data"]
        task = api.post("/tasks", json={"name": "t", "evaluators": [{"evaluatorId": evaluator["id"]}],
                                        "dataset": {"rows": rows}}).json()["data"]
        run_id = api.post(f"/tasks/{task['id']}/runs").json()["data"]["id"]
        deadline = time.monotonic() + 60
        while api.get(f"/runs/{run_id}").json()["data"]["done"] == 0:
            assert time.monotonic() < deadline, "the run made no progress"
            time.sleep(0.05)
    server.stop(signal.SIGKILL)

    server.start()
    with httpx.Client(base_url=server.url + "/api/v1", headers=auth, timeout=30) as api:
        deadline = time.monotonic() + 90
        while (run := api.get(f"/runs/{run_id}").json()["data"])["status"] != "completed":
            assert run["status"] in ("queued", "running") and time.monotonic() < deadline, run
            time.sleep(0.1)
        results = api.get(f"/runs/{run_id}/results", params={"limit": 1000}).json()["data"]
        assert results["total"] == samples and len({r["sampleId"] for r in results["items"]}) == samples
        assert run["summary"]["samplesFailed"] == samples // 4 and run["done"] == samples
        exported = api.get(f"/runs/{run_id}/export", params={"format": "jsonl"}).text.splitlines()
        assert len(exported) == samples


@pytest.mark.node_sandbox
def test_a_nodejs_evaluator_over_http(setup):
    server, auth, _env, _spare = setup
    with httpx.Client(base_url=server.url + "/api/v1", headers=auth, timeout=30) as api:
        node = api.post("/evaluators", json={"name": "date", "type": "code",
                                             "config": {"language": "nodejs", "code": NODE_CODE}})
        assert node.status_code == 200, node.text
        assert "nodejs" in {e["language"] for e in api.get("/evaluators", params={"type": "code"}).json()["data"]}
        for output, passed in (("2024-02-29", True), ("not a date", False)):
            graded = api.post(f"/evaluators/{node.json()['data']['id']}/test",
                              json={"input": "", "output": output, "expected": None}).json()["data"]
            assert (graded["passed"], graded["reason"], graded["error"]) == (passed, "date check", None)


def test_a_revoked_token_is_refused(setup):
    server, _auth, env, spare = setup
    assert httpx.get(server.url + "/api/v1/evaluators", headers={"Authorization": f"Bearer {spare}"}).status_code == 200
    revoked = assay("tokens", "revoke", spare, env=env)
    assert revoked.returncode == 0 and "revoked" in revoked.stdout
    server.stop()
    server.start()  # a fresh process: no cached answer for the token
    assert httpx.get(server.url + "/api/v1/evaluators", headers={"Authorization": f"Bearer {spare}"}).status_code == 401


def test_the_first_start_creates_an_admin_and_prints_its_token_once(tmp_path):
    env = {**os.environ, "ASSAY_DATABASE_URL": f"sqlite:///{tmp_path / 'first.db'}", "ASSAY_JUDGE_CACHE": "off"}
    log = tmp_path / "serve.log"
    server = Serve(env, log, "--log-level", "warning").start()
    try:
        lines = log.read_text().splitlines()
        at = next(i for i, line in enumerate(lines) if line.startswith("first start: created the admin user 'admin'"))
        token = lines[at + 1].strip()
        answer = httpx.get(server.url + "/api/v1/evaluators", headers={"Authorization": f"Bearer {token}"}, timeout=10)
        assert answer.status_code == 200 and len(answer.json()["data"]) == 5
    finally:
        server.stop()
    Serve(env, log, "--log-level", "warning").start().stop()  # a second start: users exist, no new token
    assert log.read_text().count("first start:") == 1
