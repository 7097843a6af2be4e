"""``PUT /api/v1/tasks/{id}``: a task's name, description, dataset and weighted evaluators are
changed (the fields given, the rest kept), checked as at creation, by its creator or an admin;
its runs keep what they graded."""

from __future__ import annotations

from test_runs_api import presets, wait_for


def test_a_task_is_edited_field_by_field_and_its_runs_keep_what_they_graded(api):
    ids = presets(api)
    first = api.call("POST", "/datasets", json={"name": "一", "rows": [{"id": "a", "output": "x", "expected": "x"}]})
    second = api.call("POST", "/datasets", json={"name": "二", "rows": [{"id": f"b{i}"} for i in range(3)]})
    first, second = first.json()["data"], second.json()["data"]
    task = api.call("POST", "/tasks", json={"name": "任务", "description": "旧的", "datasetId": first["id"],
                                            "evaluators": [{"evaluatorId": ids["exact_match"]}]}).json()["data"]
    run = wait_for(api, api.call("POST", f"/tasks/{task['id']}/runs").json()["data"]["id"])

    changed = api.call("PUT", f"/tasks/{task['id']}", json={
        "name": "新任务", "datasetId": second["id"],
        "evaluators": [{"evaluatorId": ids["contains"], "weight": 2.5}, {"evaluatorId": ids["exact_match"]}]})
    assert changed.status_code == 200, changed.text
    data = changed.json()["data"]
    assert (data["name"], data["description"], data["datasetId"], data["sampleCount"]) == ("新任务", "旧的",
                                                                                            second["id"], 3)
    assert [(e["evaluatorId"], e["weight"]) for e in data["evaluators"]] == [(ids["contains"], 2.5),
                                                                             (ids["exact_match"], 1.0)]
    assert api.call("PUT", f"/tasks/{task['id']}", json={"description": None}).json()["data"]["description"] is None
    kept = api.call("GET", f"/runs/{run['id']}").json()["data"]
    assert kept["datasetVersionId"] == run["datasetVersionId"] and kept["summary"]["samples"] == 1

    for body, status, words in [
        ({"name": None}, 422, "name"), ({"name": ""}, 422, "name"), ({"evaluators": []}, 422, "evaluators"),
        ({"evaluators": [{"evaluatorId": ids["contains"]}, {"evaluatorId": ids["contains"]}]}, 422,
         "evaluators[1].evaluatorId"),
        ({"evaluators": [{"evaluatorId": ids["contains"], "weight": -1}]}, 422, "weight"),
        ({"datasetId": "no-such"}, 404, "dataset"), ({"colour": "red"}, 422, "colour"),
    ]:
        refused = api.call("PUT", f"/tasks/{task['id']}", json=body)
        assert refused.status_code == status and words in refused.json()["message"], (body, refused.text)
    assert api.call("PUT", f"/tasks/{task['id']}", "bob", json={"name": "mine"}).status_code == 403
    assert api.call("GET", f"/tasks/{task['id']}").json()["data"]["name"] == "新任务"


def test_a_task_pins_a_dataset_version_or_grades_the_newest(api):
    ids = presets(api)
    dataset = api.call("POST", "/datasets", json={"name": "d", "rows": [{"id": "a", "output": "x", "expected": "x"}]})
    dataset = dataset.json()["data"]
    newer = api.call("POST", f"/datasets/{dataset['id']}/versions", params={"filename": "v2.jsonl"},
                     content=b'{"id": "b1"}\n{"id": "b2"}\n')
    assert newer.status_code == 200 and newer.json()["data"]["number"] == 2, newer.text
    task = api.call("POST", "/tasks", json={"name": "pinned", "datasetId": dataset["id"], "pinnedVersion": 1,
                                            "evaluators": [{"evaluatorId": ids["exact_match"]}]}).json()["data"]
    assert (task["pinnedVersion"], task["datasetVersion"], task["sampleCount"]) == (1, 1, 1)
    run = wait_for(api, api.call("POST", f"/tasks/{task['id']}/runs").json()["data"]["id"])
    assert run["summary"]["samples"] == 1  # version 1, although version 2 is newer

    unpinned = api.call("PUT", f"/tasks/{task['id']}", json={"pinnedVersion": None}).json()["data"]
    assert (unpinned["pinnedVersion"], unpinned["datasetVersion"], unpinned["sampleCount"]) == (None, 2, 2)
    run = wait_for(api, api.call("POST", f"/tasks/{task['id']}/runs").json()["data"]["id"])
    assert run["summary"]["samples"] == 2
    listed = {t["id"]: t for t in api.call("GET", "/tasks").json()["data"]}
    assert listed[task["id"]]["datasetVersion"] == 2

    assert api.call("PUT", f"/tasks/{task['id']}", json={"pinnedVersion": 2}).json()["data"]["pinnedVersion"] == 2
    other = api.call("POST", "/datasets", json={"name": "e", "rows": [{"id": "c"}]}).json()["data"]
    moved = api.call("PUT", f"/tasks/{task['id']}", json={"datasetId": other["id"]}).json()["data"]
    assert (moved["pinnedVersion"], moved["datasetVersion"]) == (None, 1)  # a pin belongs to its dataset
    for body, words in [({"pinnedVersion": 3}, "no ready version 3"), ({"pinnedVersion": 0}, "pinnedVersion"),
                        ({"datasetId": None, "pinnedVersion": 1}, "no dataset to pin")]:
        refused = api.call("PUT", f"/tasks/{task['id']}", json=body)
        assert refused.status_code == 422 and words in refused.json()["message"], (body, refused.text)
    refused = api.call("POST", "/tasks", json={"name": "x", "datasetId": dataset["id"], "pinnedVersion": 9,
                                               "evaluators": [{"evaluatorId": ids["exact_match"]}]})
    assert refused.status_code == 422 and "no ready version 9" in refused.json()["message"], refused.text

    # A pinned version deleted later: the task says so when a run starts, and names it.
    pinned = api.call("POST", "/tasks", json={"name": "p2", "datasetId": dataset["id"], "pinnedVersion": 2,
                                              "evaluators": [{"evaluatorId": ids["exact_match"]}]}).json()["data"]
    gone = api.call("POST", f"/datasets/{dataset['id']}/versions", params={"filename": "v3.jsonl"},
                    content=b'{"id": "c1"}\n').json()["data"]
    api.call("PUT", f"/tasks/{pinned['id']}", json={"pinnedVersion": gone["number"]})
    assert api.call("DELETE", f"/datasets/{dataset['id']}/versions/{gone['number']}").status_code == 200
    refused = api.call("POST", f"/tasks/{pinned['id']}/runs")
    assert refused.status_code == 409 and "pins version 3" in refused.json()["message"], refused.text
