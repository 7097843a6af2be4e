"""Tasks in the pages, in a real browser (issue 22): a task is made on /tasks/new with a dataset
and evaluators picked from searchable lists, each with a weight, checked before saving with the
field named; it is edited on /tasks/{id}/edit (also to pin a version of its dataset); a run started from its page lands on the live run
page, which names the dataset and the version it graded; a task with nothing to grade says so
and leads to its dataset instead of offering a run."""

from __future__ import annotations

import re
import uuid

import pytest

pytestmark = pytest.mark.browser

XSS = "<img src=x onerror=alert(1)>"


@pytest.fixture
def parts(live) -> dict:
    """A dataset (two versions, a hostile name) and two evaluators, all named with one new tag."""
    tag = f"t{uuid.uuid4().hex[:6]}"
    with live.api() as api:
        rows = [{"id": f"q{i}", "input": f"问题{i}", "output": "北京" if i % 2 else "上海", "expected": "北京"}
                for i in range(4)]
        dataset = api.post("/datasets", json={"name": f"{tag} 城市 {XSS}", "rows": rows[:1]}).json()["data"]
        assert api.post(f"/datasets/{dataset['id']}/versions", params={"filename": "城市.jsonl"},
                        content="\n".join(f'{{"id": "{r["id"]}", "input": "{r["input"]}", "output": "{r["output"]}",'
                                          f' "expected": "{r["expected"]}"}}' for r in rows)).status_code == 200
        made = {}
        for name, preset in (("相等", "exact_match"), ("包含", "contains")):
            body = {"name": f"{tag} {name}", "type": "preset", "config": {"presetType": preset, "params": {}}}
            made[name] = api.post("/evaluators", json=body).json()["data"]
    return {"tag": tag, "dataset": dataset, "equal": made["相等"], "contains": made["包含"]}


def pick(page, picker: str, words: str, item_id: str) -> None:
    page.fill(f"#{picker}-search", words)
    page.click(f"#{picker}-results button.pick[data-id='{item_id}']")


def test_make_edit_and_run_a_task_in_the_browser(page, live, parts, shots):
    ran: list[str] = []
    page.on("dialog", lambda dialog: (ran.append(dialog.message), dialog.dismiss()))
    tag = parts["tag"]
    page.goto(live.url + "/tasks")
    page.click("#new-task")
    page.wait_for_url("**/tasks/new")
    page.click("#save")  # nothing filled in: every problem named at its field, nothing sent
    problems = page.locator("#form-problems").inner_text()
    assert "名称：必填" in problems and "数据集：请选择一个数据集" in problems and "评估器：" in problems
    assert page.evaluate("document.activeElement.id") == "name"

    page.fill("#name", f"{tag} 城市问答")
    pick(page, "dataset-picker", tag, parts["dataset"]["id"])
    assert page.locator("#dataset-link").inner_text() == parts["dataset"]["name"]
    assert "第 2 版 · 4 行" in page.locator(".picked-dataset").inner_text()
    pick(page, "evaluator-picker", tag, parts["equal"]["id"])
    pick(page, "evaluator-picker", tag, parts["contains"]["id"])
    page.locator(f"#evaluator-picker-results button.pick[data-id='{parts['contains']['id']}']").wait_for(
        state="detached")  # a picked evaluator is not offered twice
    page.fill("#weight-1", "-1")
    page.click("#save")
    assert f"{tag} 包含 的权重" in page.locator("#form-problems").inner_text()
    assert page.locator("#weight-1[aria-invalid=true]").count() == 1
    page.fill("#weight-1", "2.5")
    page.screenshot(path=shots / "task-new.png", full_page=True)
    page.click("#save")
    page.wait_for_url(re.compile(r"/tasks/[0-9a-f-]{36}$"))
    task_id = page.url.rsplit("/", 1)[1]
    page.locator("#task-dataset a").wait_for()
    assert "第 2 版" in page.locator("#task-dataset").inner_text()
    with live.api() as api:
        task = api.get(f"/tasks/{task_id}").json()["data"]
    assert task["datasetId"] == parts["dataset"]["id"] and task["sampleCount"] == 4
    assert [(e["evaluatorId"], e["weight"]) for e in task["evaluators"]] == [(parts["equal"]["id"], 1.0),
                                                                             (parts["contains"]["id"], 2.5)]

    page.click("#edit-task")
    page.wait_for_url(f"**/tasks/{task_id}/edit")
    assert page.locator("#name").input_value() == f"{tag} 城市问答"
    assert page.locator("#weight-1").input_value() == "2.5"
    page.click(f"#picked li[data-id='{parts['equal']['id']}'] button.remove")
    page.fill("#name", f"{tag} 城市问答（改）")
    page.fill("#weight-0", "3")
    page.select_option("#dataset-version", "1")  # its runs grade version 1 from now on
    page.click("#save")
    page.wait_for_url(f"**/tasks/{task_id}")
    page.locator(f"h1:has-text('{tag} 城市问答（改）')").wait_for()
    with live.api() as api:
        task = api.get(f"/tasks/{task_id}").json()["data"]
    assert [(e["evaluatorId"], e["weight"]) for e in task["evaluators"]] == [(parts["contains"]["id"], 3.0)]
    assert (task["pinnedVersion"], task["sampleCount"]) == (1, 1)
    assert "第 1 版 (已固定)" in page.locator("#task-dataset").inner_text()
    page.goto(f"{live.url}/tasks/{task_id}/edit")  # the pin shows, and nothing is changed by showing it
    page.locator("#dataset-version option[value='2']").wait_for(state="attached")
    assert page.locator("#dataset-version").input_value() == "1" and page.locator("#dirty").is_hidden()
    page.goto(f"{live.url}/tasks/{task_id}")

    page.click("#start-run")
    page.wait_for_url(re.compile(r"/runs/[0-9a-f-]{36}$"))
    page.locator("#run-status.run-completed").wait_for()
    dataset = page.locator("#run-dataset")
    assert parts["dataset"]["name"] in dataset.inner_text() and "第 1 版 · 1 行" in dataset.inner_text()
    page.screenshot(path=shots / "task-run.png", full_page=True)
    assert page.locator("main img").count() == 0 and ran == []


def test_leaving_an_edited_task_form_asks_first(page, live, parts):
    page.goto(live.url + "/tasks/new")
    page.fill("#name", "未保存")
    asked: list[str] = []
    page.on("dialog", lambda dialog: (asked.append(dialog.message), dialog.dismiss()))
    page.click("a.button.secondary")  # back: the question is answered "stay"
    assert asked and page.url.endswith("/tasks/new")


def test_a_task_whose_dataset_has_no_rows_says_so_instead_of_starting_a_run(page, live):
    with live.api() as api:
        preset = api.get("/evaluators/presets").json()["data"][0]["id"]
        dataset = api.post("/datasets", json={"name": "空的"}).json()["data"]
        task = api.post("/tasks", json={"name": "还没有数据", "datasetId": dataset["id"],
                                        "evaluators": [{"evaluatorId": preset}]}).json()["data"]
    page.goto(f"{live.url}/tasks/{task['id']}")
    page.locator("#no-rows").wait_for()
    assert page.locator("#start-run").is_disabled()
    page.click("#no-rows a")
    page.wait_for_url(f"**/datasets/{dataset['id']}")
    page.locator("#dropzone").wait_for()
