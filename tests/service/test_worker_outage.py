"""The run worker tells an outage from a failure (``store.outage``), in one process on SQLite with
a failure injected where the worker writes results: a database blip (an ``OperationalError`` that
says the database is locked) leaves the run as it was and it completes with every result once;
a genuine error (a statement refused, a bug) still fails the run, as before. While the worker's
calls keep failing on an outage, ``/ready`` answers 503 naming it, and 200 once they pass."""

from __future__ import annotations

import sqlite3
import time

import pytest
from service_support import make_api
from sqlalchemy.exc import DataError, OperationalError

from assay.store import runs as run_rows

ROWS = 24


@pytest.fixture
def api(tmp_path, shared_resources):
    yield from make_api(f"sqlite:///{tmp_path / 'assay.db'}", shared_resources, run_slots=1, run_slice_size=8,
                        queue_poll_ms=50)


def locked() -> Exception:
    return OperationalError("INSERT INTO evaluation_results ...", {}, sqlite3.OperationalError("database is locked"))


def refused() -> Exception:
    return DataError("INSERT INTO evaluation_results ...", {}, sqlite3.DataError("value too long"))


def run_once(api) -> dict:
    preset = next(p for p in api.call("GET", "/evaluators/presets").json()["data"]
                  if p["config"]["presetType"] == "exact_match")
    rows = [{"id": f"s{i}", "output": "a", "expected": "a"} for i in range(ROWS)]
    task = api.call("POST", "/tasks", json={"name": "t", "evaluators": [{"evaluatorId": preset["id"]}],
                                            "dataset": {"rows": rows}}).json()["data"]
    run_id = api.call("POST", f"/tasks/{task['id']}/runs").json()["data"]["id"]
    deadline = time.monotonic() + 60
    while (run := api.call("GET", f"/runs/{run_id}").json()["data"])["status"] in ("queued", "running"):
        assert time.monotonic() < deadline, run
        time.sleep(0.05)
    return run


@pytest.mark.parametrize(("failure", "status"), [(locked, "completed"), (refused, "failed"), (ValueError, "failed")])
def test_a_blip_fails_no_run_and_a_genuine_error_still_does(api, monkeypatch, failure, status):
    real = run_rows.add_results
    calls = []

    def second_fails(session, rows):
        calls.append(len(rows))
        if len(calls) == 2:
            raise failure()
        return real(session, rows)

    monkeypatch.setattr(run_rows, "add_results", second_fails)
    run = run_once(api)
    assert run["status"] == status, run
    if status == "completed":
        assert run["done"] == run["total"] == ROWS and run["summary"]["samplesPassed"] == ROWS
    else:
        assert run["errorId"] and run["error"]


def test_ready_names_an_outage_the_worker_keeps_meeting_and_recovers(api, monkeypatch):
    from assay.store import queue

    real = queue.claim
    away = True

    def claim(session, holder, lease_s, **options):
        if away:
            raise locked()
        return real(session, holder, lease_s, **options)

    monkeypatch.setattr(queue, "claim", claim)
    deadline = time.monotonic() + 10
    while (answer := api.client.get("/ready")).status_code != 503:
        assert time.monotonic() < deadline, answer.text
        time.sleep(0.05)
    assert "database is locked" in answer.json()["message"] and answer.headers["retry-after"]
    scraped = api.client.get("/metrics").text
    assert "assay_database_unreachable 1.0" in scraped and "assay_database_outages 1.0" in scraped
    away = False
    deadline = time.monotonic() + 10  # the slot's next try comes within the longest pause (5 s)
    while (answer := api.client.get("/ready")).status_code != 200:
        assert time.monotonic() < deadline, answer.text
        time.sleep(0.05)
    assert "assay_database_unreachable 0.0" in api.client.get("/metrics").text
    assert run_once(api)["status"] == "completed"
