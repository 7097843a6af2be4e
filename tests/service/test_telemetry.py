"""Telemetry that shows trouble, read from a live ``assay serve``'s ``/metrics`` after real work
(issue 35, item 7): sandbox evaluations by language and outcome, judge calls (a real
OpenAI-compatible server on 127.0.0.1) with their tokens, uploads stored and refused with
their bytes, a task run from start to finish (runs, slices, results, backlog), a cancelled
run, and the database pool's use and waits; on SQLite and on a real PostgreSQL."""

from __future__ import annotations

import os
import time

import httpx2 as httpx
import pytest
from live_serve import Serve, assay

PY_CODE = ("def evaluate(input, output, expected, metadata):\n"
           "    if metadata.get('boom'):\n"
           "        raise ValueError('boom')\n"
           "    return {'passed': output == expected}\n")


@pytest.fixture
def live(tmp_path, judge_server, db_url):
    env = {**os.environ, "ASSAY_DATABASE_URL": db_url, "ASSAY_JUDGE_CACHE": "off",
           "ASSAY_JUDGE_BASE_URL": judge_server.url, "ASSAY_JUDGE_API_KEY": "test-key",
           "ASSAY_JUDGE_MODEL": "judge-test", "ASSAY_RUN_SLICE_SIZE": "4"}
    assert assay("users", "create", "alice", env=env).returncode == 0
    token = assay("tokens", "create", "alice", env=env).stdout.strip().splitlines()[-1]
    server = Serve(env, tmp_path / "server.log", "--log-level", "warning").start()
    try:
        with httpx.Client(base_url=server.url + "/api/v1", headers={"Authorization": f"Bearer {token}"},
                          timeout=60) as api:
            yield server, api
    finally:
        server.stop()


def scrape(server: Serve) -> dict[str, float]:
    text = httpx.get(server.url + "/metrics").text
    return {line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
            if line and not line.startswith("#")}


def test_metrics_show_sandbox_judge_uploads_runs_slices_and_the_pool(live):
    server, api = live
    code = api.post("/evaluators", json={"name": "code", "type": "code",
                                         "config": {"language": "python", "code": PY_CODE}}).json()["data"]
    judge = api.post("/evaluators", json={"name": "judge", "type": "llm", "config": {"rubric": "be right"}})
    assert judge.status_code == 200, judge.text
    assert api.post(f"/evaluators/{code['id']}/test", json={"input": "q", "output": "a", "expected": "a"}).json()["data"]["passed"]
    failed = api.post(f"/evaluators/{code['id']}/test", json={"input": "q", "output": "a", "metadata": {"boom": True}})
    assert failed.json()["data"]["error"] == "runtime_error"
    judged = api.post(f"/evaluators/{judge.json()['data']['id']}/test", json={"input": "q", "output": "a"})
    assert judged.json()["data"]["error"] is None, judged.text

    dataset = api.post("/datasets", json={"name": "d"}).json()["data"]
    rows = b"".join(b'{"id": "r%d", "output": "a", "expected": "a"}\n' % i for i in range(10))
    stored = api.post(f"/datasets/{dataset['id']}/versions", params={"filename": "d.jsonl"}, content=rows)
    assert stored.status_code == 200, stored.text
    refused = api.post(f"/datasets/{dataset['id']}/versions", params={"filename": "d.jsonl"}, content=b"{nope\n")
    assert refused.status_code == 422

    task = api.post("/tasks", json={"name": "t", "datasetId": dataset["id"],
                                    "evaluators": [{"evaluatorId": code["id"]}]}).json()["data"]
    run_id = api.post(f"/tasks/{task['id']}/runs").json()["data"]["id"]
    deadline = time.monotonic() + 60
    while (run := api.get(f"/runs/{run_id}").json()["data"])["status"] != "completed":
        assert run["status"] in ("queued", "running") and time.monotonic() < deadline, run
        time.sleep(0.1)

    m = scrape(server)
    assert m['assay_sandbox_evaluations_total{language="python",outcome="ok"}'] >= 11  # a test and 10 samples
    assert m['assay_sandbox_evaluations_total{language="python",outcome="runtime_error"}'] == 1
    assert m['assay_sandbox_evaluation_seconds_count{language="python"}'] >= 12
    assert m['assay_judge_calls_total{outcome="ok"}'] == 1 and m["assay_judge_call_seconds_count"] == 1
    assert m['assay_judge_tokens_total{kind="prompt"}'] == 11 and m['assay_judge_tokens_total{kind="completion"}'] == 7
    assert m['assay_dataset_uploads_total{outcome="stored"}'] == 1
    assert m['assay_dataset_uploads_total{outcome="refused"}'] == 1
    assert m["assay_dataset_upload_bytes_total"] >= 10 * len('{"id":"r0"}')
    assert m["assay_runs_started_total"] == 1
    assert m['assay_runs_finished_total{outcome="completed",reason=""}'] == 1
    assert m["assay_results_stored_total"] == 10
    assert m["assay_run_slices_leased_total"] == 3  # 10 samples in slices of 4
    assert m["assay_run_slices_retaken_total"] == 0
    assert m["assay_grading_backlog_results"] == 0
    assert m['assay_run_slices{state="pending"}'] == m['assay_run_slices{state="expired"}'] == 0
    assert m["assay_db_pool_wait_seconds_count"] > 10
    assert m['assay_db_pool_connections{state="size"}'] >= 1
    assert m['assay_db_pool_connections{state="checked_out"}'] >= 0
    assert m['assay_http_requests_total{method="POST",route="/api/v1/evaluators/{evaluator_id}/test",status="200"}'] == 3

    cancelled = api.post(f"/tasks/{task['id']}/runs").json()["data"]["id"]
    answer = api.post(f"/runs/{cancelled}/cancel")
    after = scrape(server)
    assert after["assay_runs_started_total"] == 2
    if answer.status_code == 200:  # it may have finished first: then it is not counted as cancelled
        assert after['assay_runs_finished_total{outcome="cancelled",reason=""}'] == 1
    else:
        assert answer.status_code == 409


def test_the_queue_state_counts_pending_leased_and_expired_slices_and_the_backlog(database):
    from assay.service.telemetry import queue_state
    from assay.store import queue
    from assay.store import runs as run_rows
    from assay.store import tasks as task_rows
    from assay.store.snapshot import RunEvaluator
    from assay.store.users import create_user

    with database.session() as session:
        owner = create_user(session, "alice")
        task = task_rows.create_task(session, name="t", description=None, dataset_id=None, evaluators=[],
                                     created_by_id=owner.id)
        specs = [RunEvaluator(e, e, "preset", {}, 1.0) for e in ("a", "b")]
        run = run_rows.create_run(session, task_id=task.id, evaluators=specs, samples=10, created_by_id=owner.id,
                                  slice_size=4)  # 3 slices, 20 results to store
        run_id = run.id
    with database.session() as session:
        assert queue.claim(session, "server-1", 30) is not None
    with database.session() as session:
        assert queue.claim(session, "server-2", -5) is not None  # its lease is over: server-2 is gone
    with database.session() as session:
        assert queue_state(session) == ({"pending": 1, "leased": 1, "expired": 1}, 20)
        run_rows.add_done(session, run_id, 5)
    with database.session() as session:
        assert queue_state(session)[1] == 15
