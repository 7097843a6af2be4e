"""Operating the service: ``/health``, ``/ready`` and ``/metrics`` without a token; a failed
run tells its users what to do and an error id, while the SQL goes to the log under that id;
JSON log lines."""

from __future__ import annotations

import json
import logging

from sqlalchemy.exc import DataError
from test_datasets_api import jsonl, new_dataset, upload
from test_runs_api import make_task, presets, wait_for

from assay.server.logs import JsonFormatter, log_config
from assay.store.migrate import head_revision


def test_health_ready_and_metrics_answer_without_a_token(api):
    assert api.client.get("/health").json()["data"]["status"] == "ok"
    ready = api.client.get("/ready")
    assert ready.status_code == 200
    assert ready.json()["data"]["schema"] == head_revision() and ready.json()["data"]["runs"] == {"queued": 0, "running": 0}
    dataset = new_dataset(api)
    assert upload(api, dataset["id"], "d.jsonl", jsonl([{"id": f"r{i}"} for i in range(7)])).status_code == 200
    text = api.client.get("/metrics").text
    assert 'assay_runs{state="queued"} 0.0' in text and "assay_dataset_rows_total 7.0" in text
    assert "assay_dataset_upload_rows_per_second" in text and "assay_run_slice_seconds_bucket" in text
    assert "assay_sandbox_queue_depth 0.0" in text


def test_ready_says_what_is_wrong_when_the_database_is_behind(api):
    from sqlalchemy import text

    from assay.store import Database

    database = Database(api.database_url)
    with database.session() as session:
        session.execute(text("UPDATE alembic_version SET version_num = '0001'"))
    database.dispose()
    response = api.client.get("/ready")
    assert response.status_code == 503 and "assay db upgrade" in response.json()["message"]
    assert response.json()["messageCode"] == "api.ready.other_schema"
    assert response.json()["messageArgs"] == {"revision": "'0001'", "expected": repr(head_revision())}


def test_ready_says_so_when_the_database_does_not_answer(api, monkeypatch):
    from assay.server.routes import health

    def down(_service):
        raise OSError("no route to the database")

    monkeypatch.setattr(health, "_queue_state", down)
    response = api.client.get("/ready")
    assert response.status_code == 503 and response.json() == {
        "code": 503, "message": "database unavailable (OSError); the server log has the details",
        "messageCode": "api.ready.no_database", "messageArgs": {"error": "OSError"},
        "requestId": response.headers["x-request-id"]}


def test_a_path_no_route_takes_and_a_wrong_method_say_so_by_phrase(api):
    unknown = api.call("GET", "/nonesuch")
    assert unknown.status_code == 404 and unknown.json() == {
        "code": 404, "message": "Not Found: '/api/v1/nonesuch' is no path of this API",
        "messageCode": "api.unknown_path", "messageArgs": {"path": "'/api/v1/nonesuch'"},
        "requestId": unknown.headers["x-request-id"]}
    wrong = api.client.put("/health")
    assert wrong.status_code == 405 and wrong.json()["messageCode"] == "api.wrong_method"
    assert wrong.json()["messageArgs"] == {"path": "'/health'", "method": "'PUT'"}
    assert wrong.headers["allow"] == "GET"
    routed = api.call("GET", "/runs/nope")  # a route's own 404 keeps its words
    assert routed.status_code == 404 and routed.json()["messageCode"] == "api.not_found.run"


def test_a_failed_run_shows_a_reason_and_an_error_id_and_logs_the_sql(api, monkeypatch, caplog):
    def broken(*_args, **_kwargs):
        raise DataError("SELECT data FROM dataset_rows WHERE secret = %(p)s", {"p": "hunter2"}, Exception("boom"))

    monkeypatch.setattr(api.client.app.state.service.worker.slices, "rows", broken)
    task = make_task(api, [{"evaluatorId": presets(api)["exact_match"]}])
    with caplog.at_level(logging.ERROR, logger="assay.server"):
        run = wait_for(api, api.call("POST", f"/tasks/{task['id']}/runs").json()["data"]["id"])
    assert run["status"] == "failed" and run["errorId"] and len(run["errorId"]) == 12
    assert "did not fit the database" in run["error"] and run["errorId"] in run["error"]
    assert "SELECT" not in run["error"] and "hunter2" not in run["error"] and "DataError" not in run["error"]
    (record,) = [r for r in caplog.records if getattr(r, "error_id", None) == run["errorId"]]
    assert "hunter2" in JsonFormatter().format(record)  # the operator sees it all, under the id


def test_json_log_lines_carry_the_error_id_and_the_traceback():
    try:
        raise ValueError("bad")
    except ValueError as exc:
        record = logging.LogRecord("assay.server", logging.ERROR, __file__, 1, "run %s failed", ("r1",),
                                   (type(exc), exc, exc.__traceback__))
    record.error_id = "abc123"
    line = json.loads(JsonFormatter().format(record))
    assert (line["level"], line["logger"], line["message"], line["error_id"]) == ("error", "assay.server",
                                                                                  "run r1 failed", "abc123")
    assert "ValueError: bad" in line["exception"] and line["time"].endswith("Z")
    assert (line["exc_type"], line["exc_message"]) == ("ValueError", "bad")
    assert log_config("text", "info") is None
    assert log_config("json", "info")["loggers"]["assay"]["handlers"] == ["json"]


def test_uncaught_exceptions_and_warnings_become_json_log_records(caplog):
    import sys
    import threading
    import warnings

    from assay.server.logs import log_stray_output

    saved = threading.excepthook, sys.excepthook
    try:
        log_stray_output()
        with caplog.at_level(logging.WARNING):
            thread = threading.Thread(target=lambda: 1 / 0, name="doomed")
            thread.start()
            thread.join()
            warnings.warn("an odd thing", UserWarning, stacklevel=1)
    finally:
        threading.excepthook, sys.excepthook = saved
        logging.captureWarnings(False)
    (crash,) = [r for r in caplog.records if r.name == "assay.uncaught"]
    line = json.loads(JsonFormatter().format(crash))
    assert line["message"] == "uncaught exception in thread doomed" and line["exc_type"] == "ZeroDivisionError"
    assert "1 / 0" in line["exception"]
    assert any(r.name == "py.warnings" and "an odd thing" in r.getMessage() for r in caplog.records)
