"""Tasks and runs over the API, on SQLite and PostgreSQL: inline and uploaded datasets,
background runs with progress and summary, filtered results, JSONL/CSV export, and a run
interrupted mid-way resumed at the next start without losing or duplicating results."""

from __future__ import annotations

import csv
import io
import json
import time

import pytest
from service_support import make_api

ROWS = [{"id": f"s{i}", "input": f"q{i}", "output": "yes" if i % 3 else "no", "expected": "yes", "topic": "t"}
        for i in range(9)]
PY_LENGTH = "def evaluate(input, output, expected, metadata):\n    return {'passed': len(output) > 2, 'score': min(len(output) / 3, 1.0)}\n"


def presets(api):
    return {p["config"]["presetType"]: p["id"] for p in api.call("GET", "/evaluators/presets").json()["data"]}


def wait_for(api, run_id, timeout=60.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = api.call("GET", f"/runs/{run_id}").json()["data"]
        if run["status"] not in ("queued", "running"):
            return run
        time.sleep(0.05)
    raise AssertionError(f"run {run_id} did not finish: {run}")


def make_task(api, evaluators, rows=ROWS, user="alice"):
    response = api.call("POST", "/tasks", user, json={"name": "task", "evaluators": evaluators,
                                                      "dataset": {"name": "inline", "rows": rows}})
    assert response.status_code == 200, response.text
    return response.json()["data"]


def test_a_task_runs_in_the_background_and_its_results_are_stored(api):
    ids = presets(api)
    code = api.call("POST", "/evaluators", json={"name": "long enough", "type": "code",
                                                 "config": {"language": "python", "code": PY_LENGTH}}).json()["data"]
    task = make_task(api, [{"evaluatorId": ids["exact_match"], "weight": 2}, {"evaluatorId": code["id"]}])
    assert task["sampleCount"] == 9 and [e["weight"] for e in task["evaluators"]] == [2.0, 1.0]

    started = api.call("POST", f"/tasks/{task['id']}/runs")
    assert started.status_code == 200 and started.json()["data"]["total"] == 18
    run = wait_for(api, started.json()["data"]["id"])
    assert run["status"] == "completed" and run["done"] == 18 and run["progress"] == 1.0
    summary = run["summary"]
    assert (summary["samples"], summary["samplesPassed"], summary["samplesFailed"]) == (9, 6, 3)
    by_name = {e["name"]: e for e in summary["evaluators"]}
    assert (by_name["精确匹配"]["passed"], by_name["精确匹配"]["failed"]) == (6, 3)
    assert by_name["long enough"]["passed"] == 6 and by_name["long enough"]["meanScore"] == pytest.approx(8 / 9)

    page = api.call("GET", f"/runs/{run['id']}/results", params={"limit": 5}).json()["data"]
    assert page["total"] == 18 and len(page["items"]) == 5 and page["items"][0]["sampleId"] == "s0"
    failed = api.call("GET", f"/runs/{run['id']}/results", params={"failedOnly": "true"}).json()["data"]
    assert failed["total"] == 6 and {r["sampleId"] for r in failed["items"]} == {"s0", "s3", "s6"}
    mine = api.call("GET", f"/runs/{run['id']}/results",
                    params={"evaluatorId": code["id"], "status": "passed"}).json()["data"]
    assert mine["total"] == 6 and {r["evaluatorName"] for r in mine["items"]} == {"long enough"}

    jsonl = api.call("GET", f"/runs/{run['id']}/export", params={"format": "jsonl"})
    records = [json.loads(line) for line in jsonl.text.splitlines()]
    assert jsonl.headers["content-type"].startswith("application/x-ndjson") and len(records) == 18
    assert {"sampleId", "evaluatorId", "status", "passed", "score", "reason", "latencyMs"} <= set(records[0])
    every = api.call("GET", f"/runs/{run['id']}/results", params={"limit": 100}).json()["data"]["items"]
    assert records == [{k: v for k, v in item.items() if k != "id"} for item in every]  # the API's fields, in order
    exported = api.call("GET", f"/runs/{run['id']}/export", params={"format": "csv", "failedOnly": "true"})
    assert exported.content.startswith(b"\xef\xbb\xbf")  # a UTF-8 BOM: Excel then reads Chinese right
    table = list(csv.DictReader(io.StringIO(exported.content.decode("utf-8-sig"))))
    assert len(table) == 6 and table[0]["passed"] == "false" and json.loads(table[0]["details"]) is not None
    assert list(table[0])[:5] == ["runId", "sampleId", "input", "output", "expected"]
    assert (table[0]["sampleId"], table[0]["input"], table[0]["output"], table[0]["expected"]) == ("s0", "q0", "no",
                                                                                                   "yes")

    listed = api.call("GET", f"/tasks/{task['id']}/runs").json()["data"]
    assert [r["id"] for r in listed] == [run["id"]]
    in_use = api.call("DELETE", f"/evaluators/{code['id']}")
    assert in_use.status_code == 409
    assert api.call("DELETE", f"/tasks/{task['id']}").status_code == 200
    assert api.call("GET", f"/runs/{run['id']}").status_code == 404
    assert api.call("DELETE", f"/evaluators/{code['id']}").status_code == 200


def test_results_page_by_cursor_as_by_offset(api):
    """A cursor walk gives the offset walk's results, filtered or not; only offset pages count
    a total; a cursor the API did not give, or a cursor with an offset, is a 422."""
    ids = presets(api)
    rows = [{"id": f"s{i:02}", "output": "yes" if i % 4 else "no", "expected": "yes"} for i in range(25)]
    task = make_task(api, [{"evaluatorId": ids["exact_match"]}, {"evaluatorId": ids["contains"]}], rows=rows)
    run = wait_for(api, api.call("POST", f"/tasks/{task['id']}/runs").json()["data"]["id"])
    assert run["status"] == "completed" and run["done"] == 50

    def walk(by_cursor, **filters):
        seen, cursor, offset = [], None, 0
        while True:
            params = {"limit": 7, **filters, **({"cursor": cursor} if cursor else {"offset": offset})}
            page = api.call("GET", f"/runs/{run['id']}/results", params=params).json()["data"]
            assert page["total"] is None if cursor else page["total"] >= len(page["items"])
            seen += [r["id"] for r in page["items"]]
            assert (page["nextCursor"] is None) == (len(page["items"]) < 7)
            if len(page["items"]) < 7:
                return seen
            cursor, offset = (page["nextCursor"], 0) if by_cursor else (None, offset + 7)

    for filters in ({}, {"failedOnly": "true"}, {"evaluatorId": ids["contains"], "status": "passed"}):
        assert walk(True, **filters) == walk(False, **filters), filters
    assert len(walk(True)) == 50 and len(walk(True, failedOnly="true")) == 2 * 7
    far = api.call("GET", f"/runs/{run['id']}/results", params={"cursor": f"{2**40}.{2**62}"}).json()["data"]
    assert far["items"] == [] and far["nextCursor"] is None
    for bad in ("x", "1.2.3", "-1.5", "1." + "9" * 19, "1." + "9" * 20, "١.٢"):
        answer = api.call("GET", f"/runs/{run['id']}/results", params={"cursor": bad})
        assert answer.status_code == 422 and "cursor" in answer.json()["message"], bad
    both = api.call("GET", f"/runs/{run['id']}/results", params={"cursor": "0.1", "offset": 7})
    assert both.status_code == 422 and "offset" in both.json()["message"]


def test_datasets_are_uploaded_as_jsonl_or_csv(api):
    task = make_task(api, [{"evaluatorId": presets(api)["contains"]}], rows=[])
    assert task["sampleCount"] == 0
    empty = api.call("POST", f"/tasks/{task['id']}/runs")
    assert empty.status_code == 422 and "no dataset rows" in empty.json()["message"]
    jsonl = "\n".join(json.dumps(r, ensure_ascii=False) for r in ROWS[:4]) + "\n"
    uploaded = api.call("PUT", f"/tasks/{task['id']}/dataset", files={"file": ("data.jsonl", jsonl.encode())})
    assert uploaded.status_code == 200, uploaded.text
    assert uploaded.json()["data"]["sampleCount"] == 4 and uploaded.json()["data"]["datasetName"] == "data.jsonl"
    table = "id,input,output,expected,lang\na,q,北京是中国的首都,首都,zh\nb,q,x,y,en\n"
    uploaded = api.call("PUT", f"/tasks/{task['id']}/dataset", files={"file": ("data.csv", table.encode())})
    assert uploaded.json()["data"]["sampleCount"] == 2
    run = wait_for(api, api.call("POST", f"/tasks/{task['id']}/runs").json()["data"]["id"])
    assert run["summary"]["samplesPassed"] == 1 and run["summary"]["samplesFailed"] == 1

    bad = api.call("PUT", f"/tasks/{task['id']}/dataset", files={"file": ("data.jsonl", b'{"id": 1}\n{oops\n')})
    assert bad.status_code == 422 and "data.jsonl:2" in bad.json()["message"]
    unnamed = api.call("PUT", f"/tasks/{task['id']}/dataset", files={"file": ("data.xlsx", b"...")})
    assert unnamed.status_code == 422 and ".jsonl" in unnamed.json()["message"]
    other = api.call("PUT", f"/tasks/{task['id']}/dataset", "bob", files={"file": ("data.jsonl", jsonl.encode())})
    assert other.status_code == 403


def test_task_input_is_checked(sqlite_api):
    contains = presets(sqlite_api)["contains"]
    workspace = sqlite_api.call("POST", "/tasks", json={"name": "t", "evaluators": [{"evaluatorId": contains}],
                                                       "dataset": {"rows": [{"id": "a", "workspace": "/etc"}]}})
    assert workspace.status_code == 422 and "workspace" in workspace.json()["message"]
    duplicate = sqlite_api.call("POST", "/tasks", json={"name": "t", "evaluators": [{"evaluatorId": contains}],
                                                       "dataset": {"rows": [{"id": "a"}, {"id": "a"}]}})
    assert duplicate.status_code == 422 and "duplicate sample id" in duplicate.json()["message"]
    unknown = sqlite_api.call("POST", "/tasks", json={"name": "t", "evaluators": [{"evaluatorId": "nope"}]})
    assert unknown.status_code == 404 and unknown.json()["code"] == 503001
    assert sqlite_api.call("GET", "/tasks/nope").status_code == 404
    assert sqlite_api.call("GET", "/runs/nope/results").status_code == 404


def test_an_interrupted_run_resumes_at_the_next_start_without_losing_or_duplicating(db_url, shared_resources):
    """A run left "running" with part of its results stored (as a crash leaves it) is picked
    up when the app starts again and ends with exactly one result per pair."""
    from assay.store import Database
    from assay.store import runs as run_rows
    from assay.store import tasks as task_rows
    from assay.store.snapshot import RunEvaluator

    apps = make_api(db_url, shared_resources)
    api = next(apps)
    ids = presets(api)
    task = make_task(api, [{"evaluatorId": ids["exact_match"]}, {"evaluatorId": ids["contains"]}])
    apps.close()  # the server stops

    database = Database(db_url)
    with database.session() as session:
        links = task_rows.task_evaluators(session, task["id"])
        snapshot = [RunEvaluator.of(e, w) for e, w in links]
        version = task_rows.graded_versions(session, [task_rows.get_task(session, task["id"])])[task["id"]]
        run = run_rows.create_run(session, task_id=task["id"], evaluators=snapshot, samples=9, created_by_id=None,
                                  slice_size=4, dataset_version_id=version.id)
        run_rows.set_status(session, run.id, "running")
        run_rows.add_results(session, [
            {"run_id": run.id, "sample_id": f"s{i}", "sample_index": i, "evaluator_id": ids["exact_match"],
             "evaluator_name": "精确匹配", "status": "passed", "passed": True, "score": 1.0, "reason": "before",
             "details": {}, "error_code": None, "latency_ms": 0.0} for i in range(5)])
        run_id = run.id
    database.dispose()

    for api in make_api_again(db_url, shared_resources):
        finished = wait_for(api, run_id)
        assert finished["status"] == "completed" and finished["done"] == 18
        results = api.call("GET", f"/runs/{run_id}/results", params={"limit": 100}).json()["data"]["items"]
        pairs = [(r["sampleId"], r["evaluatorId"]) for r in results]
        assert len(pairs) == len(set(pairs)) == 18
        kept = [r for r in results if r["reason"] == "before"]
        assert len(kept) == 5  # what was stored before the stop is kept, not graded again


def make_api_again(db_url, resources):
    """The app on a database that already has its users."""
    from fastapi.testclient import TestClient

    from assay.server import create_app
    from assay.settings import Settings
    from assay.store import Database
    from assay.store.users import create_token

    database = Database(db_url)
    with database.session() as session:
        token = create_token(session, "alice").secret
    database.dispose()
    from service_support import Api

    with TestClient(create_app(Settings(database_url=db_url), resources=resources)) as client:
        yield Api(client, {"alice": token}, db_url)


def test_a_run_queued_before_the_queue_existed_is_cut_into_slices_at_start(db_url, shared_resources):
    """A run row without slices (queued by a version of assay before the run queue) is planned
    when a server starts, and graded in full."""
    from assay.store import Database
    from assay.store import tasks as task_rows
    from assay.store.models import Run

    apps = make_api(db_url, shared_resources)
    api = next(apps)
    ids = presets(api)
    task = make_task(api, [{"evaluatorId": ids["exact_match"]}, {"evaluatorId": ids["contains"]}])
    apps.close()

    database = Database(db_url)
    with database.session() as session:
        snapshot = [{"evaluatorId": e.id, "name": e.name, "type": e.type, "config": e.config, "weight": w}
                    for e, w in task_rows.task_evaluators(session, task["id"])]
        run = Run(task_id=task["id"], status="queued", evaluators=snapshot, total=18, done=0)
        session.add(run)
        session.flush()
        run_id = run.id
    database.dispose()

    for api in make_api_again(db_url, shared_resources):
        finished = wait_for(api, run_id)
        assert finished["status"] == "completed" and finished["done"] == 18


def test_a_run_summary_leaves_errored_samples_out_of_the_mean_score(api):
    """A code evaluator that raises on one sample: that sample errs (its exact_match score is
    kept in its results) and is out of the run's mean score and its interval, as `assay run`
    leaves it out; the evaluator's own mean is over the eight it scored."""
    ids = presets(api)
    raises = ("def evaluate(input, output, expected, metadata):\n"
              "    if input == 'q4':\n        raise ValueError('cannot grade this one')\n"
              "    return {'passed': True, 'score': 0.5}\n")
    code = api.call("POST", "/evaluators", json={"name": "raises once", "type": "code",
                                                 "config": {"language": "python", "code": raises}}).json()["data"]
    task = make_task(api, [{"evaluatorId": ids["exact_match"]}, {"evaluatorId": code["id"]}])
    run = wait_for(api, api.call("POST", f"/tasks/{task['id']}/runs").json()["data"]["id"])
    summary = run["summary"]
    assert summary["samplesErrored"] == 1 and summary["leftOut"] == 1
    # Each sample's score: the mean of exact_match's (1 or 0) and 0.5; s4 ("yes") errs.
    decided = [((1.0 if r["output"] == "yes" else 0.0) + 0.5) / 2 for r in ROWS if r["id"] != "s4"]
    assert summary["meanScore"] == pytest.approx(sum(decided) / 8)
    assert summary["meanScore"] != pytest.approx((sum(decided) + 1.0) / 9)  # s4's exact_match alone said 1.0
    lo, hi = summary["meanScoreCi"]
    assert lo < summary["meanScore"] < hi
    by_name = {e["name"]: e for e in summary["evaluators"]}
    assert by_name["raises once"]["error"] == 1 and by_name["raises once"]["meanScore"] == 0.5
