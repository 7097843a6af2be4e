"""``/api/v1/datasets`` on SQLite and PostgreSQL: create, upload in every format (the body read
as it arrives, with or without a length), list, get, rows by page, versions, delete; a task
grades a dataset's newest version and its runs keep the version they graded; every limit is
checked at upload with the same numbers on both databases, naming the line and the field."""

from __future__ import annotations

import io
import json

import pytest
from service_support import all_stored_rows, make_api
from test_runs_api import presets, wait_for

ROWS = [{"id": f"s{i}", "input": f"q{i}", "output": "a", "expected": "a" if i % 2 else "b", "topic": "t"}
        for i in range(6)]


def jsonl(rows) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in rows)


def new_dataset(api, rows=None, user="alice"):
    body = {"name": "capitals"} | ({"rows": rows} if rows is not None else {})
    response = api.call("POST", "/datasets", user, json=body)
    assert response.status_code == 200, response.text
    return response.json()["data"]


def upload(api, dataset_id, filename, data, user="alice", **kwargs):
    return api.call("POST", f"/datasets/{dataset_id}/versions", user, params={"filename": filename}, content=data,
                    **kwargs)


def parquet(rows) -> bytes:
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    out = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows), out)
    return out.getvalue()


def test_a_dataset_is_created_uploaded_in_every_format_listed_and_paged(api):
    dataset = new_dataset(api, ROWS)
    first = dataset["latest"]
    assert (first["number"], first["rowCount"], first["format"]) == (1, 6, "inline")
    assert first["columns"] == ["id", "input", "output", "expected", "topic"] and first["sizeBytes"] > 0
    csv_text = "id,input,output\nc1,q,\"a,b\"\nc2,q2,x\n"
    bodies = [("d.jsonl", jsonl(ROWS[:4])), ("d.csv", csv_text.encode()),
              ("d.tsv", csv_text.replace(",", "\t").replace('"a\tb"', "ab").encode()),
              ("d.json", json.dumps(ROWS[:2]).encode()), ("d.parquet", parquet(ROWS[:3]))]
    for number, (name, data) in enumerate(bodies, 2):
        response = upload(api, dataset["id"], name, data)
        assert response.status_code == 200, (name, response.text)
        assert response.json()["data"]["number"] == number and response.json()["data"]["sourceName"] == name
    chunked = upload(api, dataset["id"], "e.jsonl", iter([jsonl(ROWS[:1]), jsonl(ROWS[1:5])]))  # no length
    assert chunked.status_code == 200 and chunked.json()["data"]["rowCount"] == 5

    listed = api.call("GET", "/datasets").json()["data"]
    assert [(d["id"], d["latest"]["number"], d["latest"]["rowCount"]) for d in listed] == [(dataset["id"], 7, 5)]
    detail = api.call("GET", f"/datasets/{dataset['id']}").json()["data"]
    assert [v["rowCount"] for v in detail["versions"]] == [6, 4, 2, 2, 2, 3, 5]
    assert [v["format"] for v in detail["versions"]] == ["inline", "jsonl", "csv", "csv", "json", "parquet", "jsonl"]

    page = api.call("GET", f"/datasets/{dataset['id']}/rows", params={"version": 1, "offset": 2, "limit": 3})
    data = page.json()["data"]
    assert (data["total"], data["version"], [i["position"] for i in data["items"]]) == (6, 1, [2, 3, 4])
    assert data["items"][0]["row"] == {"id": "s2", "input": "q2", "output": "a", "expected": "b",
                                       "metadata": {"topic": "t"}}
    csv_rows = api.call("GET", f"/datasets/{dataset['id']}/rows", params={"version": 3}).json()["data"]["items"]
    assert [r["row"] for r in csv_rows] == [{"id": "c1", "input": "q", "output": "a,b"},
                                            {"id": "c2", "input": "q2", "output": "x"}]
    assert api.call("GET", f"/datasets/{dataset['id']}/rows", params={"version": 99}).status_code == 404
    huge = 2**63  # beyond a database integer: refused as input, never a driver's OverflowError (a 500)
    for params in ({"version": huge}, {"offset": huge}):
        assert api.call("GET", f"/datasets/{dataset['id']}/rows", params=params).status_code == 422
    assert api.call("DELETE", f"/datasets/{dataset['id']}/versions/{huge}").status_code == 422


@pytest.mark.parametrize("name, data, where, words", [
    ("d.jsonl", jsonl([{"id": "ok"}, {"id": "x" * 301, "input": "q"}]), "d.jsonl:2", "id: 301 characters"),
    ("d.csv", b"id,input\na,1\nb,2\na,3\n", "d.csv:4", "duplicate sample id 'a' (first at d.csv:2)"),
    ("d.jsonl", jsonl([{"id": "w", "workspace": "/etc"}]), "d.jsonl:1", "workspace"),
    ("d.jsonl", b'{"id": "a"}\n{oops\n', "d.jsonl:2", "invalid JSON"),
    ("d.jsonl", jsonl([{"id": "big", "input": "x" * 5000}]), "d.jsonl:1", "over the limit of 4,096"),
    ("d.jsonl", jsonl([{"id": f"r{i}"} for i in range(12)]), "d.jsonl:11", "more than 10 rows"),
    ("d.xlsx", b"...", "", "cannot tell the format"),
])
def test_every_limit_is_checked_at_upload_naming_the_line_and_field(db_url, shared_resources, name, data, where,
                                                                    words):
    apps = make_api(db_url, shared_resources, dataset_max_rows=10, dataset_max_row_bytes=4096)
    api = next(apps)
    try:
        dataset = new_dataset(api, ROWS[:1])
        response = upload(api, dataset["id"], name, data)
        assert response.status_code == 422, response.text
        message = response.json()["message"]
        assert where in message and words in message, message
        if "limit" in words or "rows" in words:  # a limit is said in the page's language too
            from assay.server.pages.i18n import say

            said = response.json()
            chinese = say("zh", said.get("messageCode"), said.get("messageArgs"), message)
            assert chinese != message and where in chinese and ("上限" in chinese or "超过" in chinese), chinese
        detail = api.call("GET", f"/datasets/{dataset['id']}").json()["data"]
        assert [v["number"] for v in detail["versions"]] == [1]  # nothing of the refused upload is kept
    finally:
        apps.close()


def test_a_duplicate_across_write_batches_is_refused_and_leaves_no_rows(api):
    from assay.service.row_batches import BATCH
    from assay.store import Database

    dataset = new_dataset(api)
    rows = [{"id": f"r{i}"} for i in range(BATCH + 10)] + [{"id": "r3"}]
    response = upload(api, dataset["id"], "d.jsonl", jsonl(rows))
    assert response.status_code == 422
    assert f"d.jsonl:{BATCH + 11}" in response.json()["message"] and "first at d.jsonl:4" in response.json()["message"]
    database = Database(api.database_url)
    assert all_stored_rows(database) == 0  # nor, on PostgreSQL, the refused version's table
    database.dispose()


def test_a_duplicate_is_named_by_its_lines_past_blank_lines(api):
    """PostgreSQL finds a duplicate of an earlier batch at the end (the keys are built then);
    both databases name its two lines, which blank lines have moved off the row numbers."""
    from assay.service.row_batches import BATCH

    dataset = new_dataset(api)
    body = b"\n\n" + jsonl([{"id": f"r{i}"} for i in range(BATCH + 10)]) + b"\n" + jsonl([{"id": "r7"}])
    response = upload(api, dataset["id"], "d.jsonl", body)
    assert response.status_code == 422
    assert response.json()["message"].startswith(f"d.jsonl:{BATCH + 14}: duplicate sample id 'r7' (first at "
                                                 "d.jsonl:10)"), response.json()["message"]


def test_a_task_grades_the_newest_version_and_its_runs_keep_theirs(api):
    ids = presets(api)
    dataset = new_dataset(api, ROWS)
    task = api.call("POST", "/tasks", json={"name": "t", "datasetId": dataset["id"],
                                            "evaluators": [{"evaluatorId": ids["exact_match"]}]}).json()["data"]
    assert (task["datasetId"], task["datasetVersion"], task["sampleCount"]) == (dataset["id"], 1, 6)
    first = wait_for(api, api.call("POST", f"/tasks/{task['id']}/runs").json()["data"]["id"])
    assert first["status"] == "completed" and first["summary"]["samplesPassed"] == 3
    assert upload(api, dataset["id"], "d.jsonl", jsonl(ROWS[:2])).status_code == 200
    assert api.call("GET", f"/tasks/{task['id']}").json()["data"]["sampleCount"] == 2
    second = wait_for(api, api.call("POST", f"/tasks/{task['id']}/runs").json()["data"]["id"])
    assert second["total"] == 2 and second["datasetVersionId"] != first["datasetVersionId"]
    slices = [line for line in api.client.get("/metrics").text.splitlines()
              if line.startswith("assay_run_slice_seconds_count")]
    assert slices and float(slices[0].split()[-1]) >= 2  # each run's slices were timed

    used = api.call("DELETE", f"/datasets/{dataset['id']}/versions/1")
    assert used.status_code == 409 and "graded by a run" in used.json()["message"]
    named = api.call("DELETE", f"/datasets/{dataset['id']}")
    assert named.status_code == 409 and "'t'" in named.json()["message"]
    sample = api.client.get(f"/pages/api/runs/{first['id']}/samples/s5", headers=api.as_("alice")).json()["data"]
    assert sample["row"]["input"] == "q5"  # the first run's rows are still there
    assert api.call("DELETE", f"/datasets/{dataset['id']}", "bob").status_code == 403
    assert api.call("DELETE", f"/tasks/{task['id']}").status_code == 200
    assert api.call("DELETE", f"/datasets/{dataset['id']}/versions/1").status_code == 200
    assert api.call("DELETE", f"/datasets/{dataset['id']}").status_code == 200
    assert api.call("GET", f"/datasets/{dataset['id']}").status_code == 404


def test_an_upload_without_a_length_is_cut_at_the_limit(db_url, shared_resources):
    apps = make_api(db_url, shared_resources, api_max_upload_bytes=10_000)
    api = next(apps)
    try:
        dataset = new_dataset(api)
        chunks = iter([jsonl([{"id": f"r{i}", "input": "x" * 50} for i in range(40)]) for _ in range(10)])
        response = upload(api, dataset["id"], "d.jsonl", chunks)
        assert response.status_code == 413 and "10,000 bytes" in response.json()["message"]
        assert api.call("GET", f"/datasets/{dataset['id']}").json()["data"]["versions"] == []
    finally:
        apps.close()


def test_a_dataset_is_renamed_and_described_by_its_owner_within_the_create_limits(api):
    dataset = new_dataset(api, ROWS[:2])
    before = api.call("GET", f"/datasets/{dataset['id']}").json()["data"]
    renamed = api.call("PATCH", f"/datasets/{dataset['id']}", json={"name": "首都问答 v2", "description": "说明"})
    assert renamed.status_code == 200, renamed.text
    data = renamed.json()["data"]
    assert (data["name"], data["description"]) == ("首都问答 v2", "说明")
    assert data["versions"] == before["versions"] and data["updatedAt"] >= before["updatedAt"]  # rows untouched
    only_description = api.call("PATCH", f"/datasets/{dataset['id']}", json={"description": None}).json()["data"]
    assert (only_description["name"], only_description["description"]) == ("首都问答 v2", None)
    assert api.call("GET", "/datasets", params={"q": "首都"}).json()["data"][0]["id"] == dataset["id"]

    for body, field in (({"name": ""}, "name"), ({"name": "x" * 201}, "name"), ({"name": None}, "name"),
                        ({"description": "d" * 4001}, "description"), ({"name": "a\x00b"}, "name")):
        refused = api.call("PATCH", f"/datasets/{dataset['id']}", json=body)
        assert refused.status_code == 422 and refused.json()["message"].startswith(f"{field}"), (body, refused.text)
    assert api.call("PATCH", f"/datasets/{dataset['id']}", json={"name": "x" * 200}).status_code == 200  # the limit
    assert api.call("PATCH", f"/datasets/{dataset['id']}", json={"rows": []}).status_code == 422  # unknown field

    assert api.call("PATCH", f"/datasets/{dataset['id']}", "bob", json={"name": "mine"}).status_code == 403
    assert api.call("PATCH", f"/datasets/{dataset['id']}", "root", json={"name": "an admin's"}).status_code == 200
    assert api.call("PATCH", "/datasets/no-such-id", json={"name": "n"}).status_code == 404
    assert api.call("GET", f"/datasets/{dataset['id']}").json()["data"]["name"] == "an admin's"


@pytest.mark.parametrize("name, data, where, chinese", [
    ("d.csv", b"id,input\na,1\nb,2\na,3\n", "d.csv:4", "重复的样本 id 'a'（首次出现在 d.csv:2）"),
    ("d.jsonl", jsonl([{"id": "a"}, {"id": "a"}]), "d.jsonl:2", "重复的样本 id 'a'"),
    ("d.csv", b"id,output\n1,a,extra\n", "d.csv:2", "该行有 3 个单元格，但表头有 2 列；包含 `,` 的单元格请加引号"),
    ("d.csv", b"id,output,expected\n1,a,b\n2,a\n", "d.csv:3", "该行有 2 个单元格，但表头有 3 列"),
    ("d.csv", b"id,,output\n1,a,b\n", "d.csv:1", "表头第 2 列没有名称"),
    ("d.csv", b"id,output,id\n1,a,b\n", "d.csv:1", "表头第 3 列与第 1 列重名"),
    ("d.csv", b'id,output\n1,a\n2,"b\n3,c\n', "d.csv:3", "引号未闭合：从第 3 行开始"),
    ("d.csv", b"id;output\n1;a\n", "d.csv:1", "看起来以 `;` 分隔"),
])
def test_a_dataset_file_refused_for_its_shape_is_said_in_the_pages_language_with_where(api, name, data, where,
                                                                                       chinese):
    """The reader's refusals (duplicate ids, a row's cells against the header, the header, quotes)
    carry their phrase: the Chinese pages say them in Chinese, with the file, line and column."""
    from assay.server.pages.i18n import say

    dataset = new_dataset(api, ROWS[:1])
    response = upload(api, dataset["id"], name, data)
    assert response.status_code == 422, response.text
    said = response.json()
    assert said.get("messageCode"), said
    text = say("zh", said["messageCode"], said.get("messageArgs"), said["message"])
    assert where in text and chinese in text, text
