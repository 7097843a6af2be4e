"""Hostile input around tasks and runs: uploaded file names, numbers the dataset readers give up
on, formulas in CSV exports, revoked tokens, and races between a cancel, a delete and the
grading process."""

from __future__ import annotations

import csv
import io
import time

import pytest


def preset_id(api) -> str:
    return api.call("GET", "/evaluators/presets").json()["data"][0]["id"]


def new_task(api, rows=None) -> str:
    rows = rows if rows is not None else [{"input": "q", "output": "a", "expected": "a"}]
    response = api.call("POST", "/tasks", json={"name": "t", "evaluators": [{"evaluatorId": preset_id(api)}],
                                                "dataset": {"rows": rows}})
    assert response.status_code == 200, response.text
    return response.json()["data"]["id"]


def upload(api, task_id: str, name: str, data: bytes):
    return api.call("PUT", f"/tasks/{task_id}/dataset", files={"file": (name, data, "application/octet-stream")})


@pytest.mark.parametrize(("sent", "kept"), [
    ("../../etc/passwd.jsonl", "passwd.jsonl"),
    ("..\\..\\windows\\data.jsonl", "data.jsonl"),
    ("/abs/path/x.jsonl", "x.jsonl"),
    ("a" * 1000 + ".jsonl", "a" * 294 + ".jsonl"),
])
def test_an_uploaded_file_is_known_by_its_base_name_within_the_column(api, sent, kept):
    response = upload(api, new_task(api), sent, b'{"input": "q", "output": "a"}\n')
    assert response.status_code == 200, response.text
    assert response.json()["data"]["datasetName"] == kept


def test_an_integer_past_pythons_conversion_limit_is_kept_as_its_exact_text(sqlite_api):
    data = b'{"input": "q", "output": "a"}\n{"input": "q", "output": "a", "n": ' + b"9" * 5000 + b"}\n"
    response = upload(sqlite_api, new_task(sqlite_api), "d.jsonl", data)
    assert response.status_code == 200, response.text


def wait_done(api, run_id: str) -> dict:
    for _ in range(200):
        run = api.call("GET", f"/runs/{run_id}").json()["data"]
        if run["status"] not in ("queued", "running"):
            return run
        time.sleep(0.05)
    raise AssertionError(f"run {run_id} did not finish")


def test_csv_export_cells_cannot_become_formulas(sqlite_api):
    rows = [{"id": f, "input": "q", "output": f, "expected": "x"} for f in
            ("=HYPERLINK(\"http://x\")", "+1+1", "-2+3", "@SUM(A1)", "\tcmd", "plain")]
    task_id = new_task(sqlite_api, rows)
    run = wait_done(sqlite_api, sqlite_api.call("POST", f"/tasks/{task_id}/runs").json()["data"]["id"])
    exported = sqlite_api.call("GET", f"/runs/{run['id']}/export?format=csv")
    records = list(csv.DictReader(io.StringIO(exported.text)))
    assert [r["sampleId"] for r in records] == ["'=HYPERLINK(\"http://x\")", "'+1+1", "'-2+3", "'@SUM(A1)",
                                                "'\tcmd", "plain"]
    assert all(not cell.startswith(("=", "+", "-", "@", "\t")) for r in records for cell in r.values())
    jsonl = sqlite_api.call("GET", f"/runs/{run['id']}/export?format=jsonl").text
    assert '"sampleId":"=HYPERLINK' in jsonl  # JSON is data, not a spreadsheet: left as it was


def test_a_revoked_token_is_refused_within_one_poll_of_the_change_counters(sqlite_api):
    from assay.store import Database
    from assay.store.users import revoke_token

    assert sqlite_api.call("GET", "/evaluators", "bob").status_code == 200  # now kept by the server
    database = Database(sqlite_api.database_url)
    with database.session() as session:
        revoke_token(session, sqlite_api.tokens["bob"])
    database.dispose()
    deadline = time.monotonic() + 5  # read every ASSAY_CHANGE_POLL_MS (1 s)
    while (refused := sqlite_api.call("GET", "/evaluators", "bob")).status_code != 401:
        assert time.monotonic() < deadline, "the revoked token still works after 5 s"
        time.sleep(0.05)
    assert refused.json()["code"] == 401
    assert sqlite_api.call("GET", "/evaluators", "alice").status_code == 200


def test_a_cancel_between_reading_and_starting_a_run_wins(sqlite_api, monkeypatch):
    """The grading process read the run as queued; a cancel lands before it marks it running:
    the run stays cancelled and grades nothing (it used to be overwritten and graded in full).
    Here: a slot claimed a slice and read the run as queued; the cancel landed meanwhile."""
    from sqlalchemy import delete, select, update

    from assay.service import slices as slices_module
    from assay.store import queue
    from assay.store import runs as run_rows
    from assay.store.models import EvaluationResult, RunSlice, SliceState

    service = sqlite_api.client.app.state.service
    task_id = new_task(sqlite_api)
    run_id = sqlite_api.call("POST", f"/tasks/{task_id}/runs").json()["data"]["id"]
    wait_done(sqlite_api, run_id)
    with service.database.session() as session:  # cancelled, with nothing graded yet, its slice held here
        run_rows.set_status(session, run_id, "cancelled")
        run_rows.set_done(session, run_id, 0)
        session.execute(delete(EvaluationResult))
        session.execute(update(RunSlice).where(RunSlice.run_id == run_id)
                        .values(state=SliceState.LEASED, holder=service.worker.holder))
        held = session.scalars(select(RunSlice).where(RunSlice.run_id == run_id)).first()
        claim = queue.Claim(held.id, run_id, held.user_id, held.start, held.stop)
    real_get_run = run_rows.get_run

    def read_before_the_cancel(session, wanted):
        run = real_get_run(session, wanted)
        session.expunge(run)
        run.status = "queued"
        return run

    monkeypatch.setattr(slices_module.run_rows, "get_run", read_before_the_cancel)
    service.worker._grade(claim)
    monkeypatch.undo()
    run = sqlite_api.call("GET", f"/runs/{run_id}").json()["data"]
    assert run["status"] == "cancelled" and run["done"] == 0


def test_a_cancel_of_a_run_that_finished_meanwhile_leaves_it_finished(sqlite_api):
    task_id = new_task(sqlite_api)
    run_id = sqlite_api.call("POST", f"/tasks/{task_id}/runs").json()["data"]["id"]
    wait_done(sqlite_api, run_id)
    refused = sqlite_api.call("POST", f"/runs/{run_id}/cancel")
    assert refused.status_code == 409 and "completed" in refused.json()["message"]
    assert sqlite_api.call("GET", f"/runs/{run_id}").json()["data"]["status"] == "completed"


def test_an_evaluator_removed_while_a_task_is_created_is_a_conflict_not_a_crash(sqlite_api, monkeypatch):
    from assay.server.routes import tasks as task_routes

    ghost = "00000000-0000-4000-8000-000000000000"
    real_get = task_routes.evaluator_rows.get_evaluator
    monkeypatch.setattr(task_routes.evaluator_rows, "get_evaluator",
                        lambda session, evaluator_id: real_get(session, preset_id_cached) if evaluator_id == ghost
                        else real_get(session, evaluator_id))
    preset_id_cached = preset_id(sqlite_api)
    response = sqlite_api.call("POST", "/tasks", json={"name": "t", "evaluators": [{"evaluatorId": ghost}],
                                                       "dataset": {"rows": [{"input": "q", "output": "a"}]}})
    assert response.status_code == 409 and response.json()["code"] == 409, response.text
    monkeypatch.undo()
    assert sqlite_api.call("GET", "/tasks").json()["data"] == []
