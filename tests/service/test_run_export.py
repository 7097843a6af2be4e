"""A run's export over the API: it takes every filter of the results listing and holds exactly
the results the listing shows under them, JSONL and CSV hold the same fields in the same
order, a reason is said in the language asked for (its code and arguments beside it), and
latencies are rounded."""

from __future__ import annotations

import csv
import io
import json

import pytest
from test_runs_api import make_task, presets, wait_for

from assay.server.pages.i18n import catalogue

ROWS = [{"id": f"s{i}", "input": f"问题{i}", "output": "是" if i % 3 else "否", "expected": "是"} for i in range(9)]
FILTERS = [{}, {"failedOnly": "true"}, {"status": "failed"}, {"status": "passed"}, {"sampleId": "s3"},
           {"sampleId": "s3", "failedOnly": "true"}, {"sampleId": "nobody"}]


@pytest.fixture
def finished_run(api):
    ids = presets(api)
    task = make_task(api, [{"evaluatorId": ids["exact_match"]}, {"evaluatorId": ids["contains"]}], rows=ROWS)
    run = wait_for(api, api.call("POST", f"/tasks/{task['id']}/runs").json()["data"]["id"])
    assert run["status"] == "completed" and run["done"] == 18
    return run["id"], ids


def exported(api, run_id, params):
    jsonl = api.call("GET", f"/runs/{run_id}/export", params={**params, "format": "jsonl"})
    assert jsonl.status_code == 200, jsonl.text
    spreadsheet = api.call("GET", f"/runs/{run_id}/export", params={**params, "format": "csv"})
    assert spreadsheet.content.startswith(b"\xef\xbb\xbf")
    reader = csv.DictReader(io.StringIO(spreadsheet.content.decode("utf-8-sig")))
    return [json.loads(line) for line in jsonl.text.splitlines()], list(reader), reader.fieldnames


def listed(api, run_id, params):
    page = api.call("GET", f"/runs/{run_id}/results", params={**params, "limit": 1000}).json()["data"]
    return page["items"]


def test_the_export_holds_what_the_listing_shows_under_each_filter(api, finished_run):
    run_id, ids = finished_run
    for params in [*FILTERS, {"evaluatorId": ids["contains"]}, {"evaluatorId": ids["exact_match"], "status": "failed"}]:
        records, table, _ = exported(api, run_id, params)
        shown = listed(api, run_id, params)
        keys = [(r["sampleId"], r["evaluatorId"], r["status"]) for r in shown]
        assert [(r["sampleId"], r["evaluatorId"], r["status"]) for r in records] == keys, params
        assert [(r["sampleId"], r["evaluatorId"], r["status"]) for r in table] == keys, params
    assert len(exported(api, run_id, {"failedOnly": "true"})[0]) == 6  # s0, s3, s6 by both evaluators
    assert exported(api, run_id, {"sampleId": "nobody"})[:2] == ([], [])


def test_jsonl_and_csv_hold_the_same_fields_with_each_samples_row(api, finished_run):
    run_id, _ = finished_run
    records, table, header = exported(api, run_id, {})
    assert header == list(records[0]) and len(records) == len(table) == 18
    assert header[:5] == ["runId", "sampleId", "input", "output", "expected"]
    assert {"reasonCode", "reasonArgs", "latencyMs", "details", "error"} <= set(header)
    for record, row in zip(records, table, strict=True):
        assert (record["input"], record["output"], record["expected"]) == (ROWS[int(record["sampleId"][1:])]["input"],
                                                                           ROWS[int(record["sampleId"][1:])]["output"],
                                                                           "是")
        as_cells = {k: "" if v is None else "true" if v is True else "false" if v is False
                    else json.dumps(v, ensure_ascii=False, separators=(",", ":")) if isinstance(v, (dict, list))
                    else str(v) for k, v in record.items()}
        assert {k: v for k, v in row.items() if k not in ("reasonArgs", "details")} == \
            {k: v for k, v in as_cells.items() if k not in ("reasonArgs", "details")}
        assert json.loads(row["reasonArgs"] or "null") == record["reasonArgs"]
        assert json.loads(row["details"]) == record["details"]
        assert record["latencyMs"] == round(record["latencyMs"], 2)
    by_api = {(r["sampleId"], r["evaluatorId"]): r for r in listed(api, run_id, {})}
    for record in records:
        item = by_api[(record["sampleId"], record["evaluatorId"])]
        assert record["latencyMs"] == round(item["latencyMs"], 2) and record["reason"] == item["reason"]


def test_reasons_are_said_in_the_language_asked_for_with_their_code_beside(api, finished_run):
    run_id, ids = finished_run
    params = {"evaluatorId": ids["exact_match"], "sampleId": "s0"}
    english, _, _ = exported(api, run_id, params)
    chinese, table, _ = exported(api, run_id, {**params, "lang": "zh"})
    said = english[0]
    assert said["reasonCode"].startswith("exact_match.") and said["reason"].startswith("output")
    expected = catalogue("zh")[f"phrase.{said['reasonCode']}"]
    for name, value in said["reasonArgs"].items():
        expected = expected.replace("{" + name + "}", str(value))
    assert chinese[0]["reason"] == table[0]["reason"] == expected and "输出" in expected
    assert (chinese[0]["reasonCode"], chinese[0]["reasonArgs"]) == (said["reasonCode"], said["reasonArgs"])
    assert api.call("GET", f"/runs/{run_id}/export", params={"lang": "fr"}).status_code == 422
