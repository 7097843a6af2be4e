"""Datasets in the pages, in a real browser (issue 22): a dataset is made on /datasets, its
versions are uploaded by the file picker and by drag and drop with the progress shown, the
server's refusals name the row and the field, the rows are previewed page by page with their
columns, versions and datasets are deleted (refused while a task grades them), and stored
markup (a hostile name, hostile cells, a hostile file name) stays text."""

from __future__ import annotations

import json
import re
import uuid

import pytest
from pages_support import wait_until

pytestmark = pytest.mark.browser

XSS = "<img src=x onerror=alert(1)><script>alert(2)</script>"


def jsonl(rows: list[dict]) -> bytes:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows).encode()


def alerts(page) -> list[str]:
    """Every alert() a page runs (stored markup that ran): none may."""
    seen: list[str] = []
    page.on("dialog", lambda dialog: (seen.append(dialog.message), dialog.dismiss()))
    return seen


def make_dataset(page, live, name: str) -> str:
    page.goto(live.url + "/datasets")
    page.click("#new-dataset-open")
    page.click("#create-dataset")  # without a name: refused at the field, nothing sent
    page.locator("#new-name-error:has-text('必填')").wait_for()
    page.fill("#new-name", name)
    page.fill("#new-description", XSS)
    page.click("#create-dataset")
    page.wait_for_url(re.compile(r"/datasets/[0-9a-f-]{36}$"))
    return page.url.rsplit("/", 1)[1]


def test_upload_by_picker_and_by_drop_then_preview_the_rows(page, live, shots):
    ran = alerts(page)
    name = f"客服问答 {uuid.uuid4().hex[:6]} {XSS}"
    dataset_id = make_dataset(page, live, name)
    assert page.locator("#dataset-name").inner_text() == name
    rows = [{"id": f"q{i:02d}", "input": f"问题 {i} {XSS}", "output": "回答" * (i + 1), "expected": "回答",
             "topic": "售后"} for i in range(25)]
    page.set_input_files("#file-input", files=[{"name": "问答.jsonl", "mimeType": "application/json",
                                                "buffer": jsonl(rows)}])
    page.locator("#preview-title:has-text('第 1 版')").wait_for()
    page.locator("#preview tbody tr").nth(19).wait_for()
    assert page.locator("#preview thead th").all_inner_texts() == ["#", "id", "input", "output", "expected",
                                                                   "topic"]  # the file's columns
    assert page.locator("#preview tbody tr").count() == 20
    first = page.locator("#preview tbody tr").first.locator("td").all_inner_texts()
    assert first[:3] == ["1", "q00", f"问题 0 {XSS}"] and first[5] == "售后"
    page.click("#page-next")
    page.wait_for_url(re.compile(r"page=2"))
    page.locator("#page-info:has-text('第 2 / 2 页')").wait_for()
    assert page.locator("#preview tbody tr").count() == 5
    page.screenshot(path=shots / "dataset-preview.png", full_page=True)

    # Drag and drop a CSV (slowed down, so that the progress shows on the way).
    csv = "id,input,output\n" + "".join(f"c{i},问{i},{'答' * 400}\n" for i in range(300))
    cdp = page.context.new_cdp_session(page)
    cdp.send("Network.enable")
    cdp.send("Network.emulateNetworkConditions", {"offline": False, "latency": 0, "downloadThroughput": -1,
                                                  "uploadThroughput": 400_000})
    drop = page.evaluate_handle("text => { const dt = new DataTransfer();"
                                " dt.items.add(new File([text], 'v2.csv', {type: 'text/csv'})); return dt; }", csv)
    page.dispatch_event("#dropzone", "drop", {"dataTransfer": drop})
    wait_until(page, "(() => { const bar = document.querySelector('#upload-progress');"
                     " return bar && bar.value > 0 && bar.value < 100; })()")
    assert "正在上传 v2.csv" in page.locator("#upload-words").inner_text()
    page.locator("#preview-title:has-text('第 2 版')").wait_for()
    page.locator("#preview tbody tr").first.wait_for()  # the rows come after the title
    cdp.send("Network.emulateNetworkConditions", {"offline": False, "latency": 0, "downloadThroughput": -1,
                                                  "uploadThroughput": -1})
    assert page.locator("#preview thead th").all_inner_texts() == ["#", "id", "input", "output"]
    assert page.locator("#versions tbody tr").count() == 2
    page.click("#versions tr[data-number='1'] button.show-version")  # back to version 1, in the URL
    page.wait_for_url(re.compile(r"version=1"))
    page.locator("#preview-title:has-text('第 1 版')").wait_for()
    page.reload()
    page.locator("#preview tbody tr").first.wait_for()
    assert page.locator("#preview-title").inner_text() == "第 1 版的数据行"

    page.goto(live.url + "/datasets?q=" + name.split()[1])
    page.locator("#datasets tbody tr").first.wait_for()
    assert page.locator("#datasets td.name").all_inner_texts() == [name]
    assert page.locator("main img, main script").count() == 0 and ran == []
    with live.api() as api:
        assert api.get(f"/datasets/{dataset_id}").json()["data"]["description"] == XSS


def test_a_refused_upload_names_the_row_and_the_field_then_versions_are_deleted(page, live):
    page.goto(live.url + "/datasets")
    make_dataset(page, live, f"坏文件 {uuid.uuid4().hex[:6]}")
    bad = jsonl([{"id": "ok", "input": "好"}, {"id": "x" * 301, "input": "坏"}])
    page.set_input_files("#file-input", files=[{"name": "bad.jsonl", "mimeType": "text/plain", "buffer": bad}])
    error = page.locator("#upload-error")
    error.wait_for()
    assert "bad.jsonl 未能上传" in error.inner_text()
    assert "bad.jsonl:2" in error.inner_text() and "id: 301 characters" in error.inner_text()
    page.set_input_files("#file-input", files=[{"name": "data.xlsx", "mimeType": "text/plain", "buffer": b"x"}])
    page.locator("#upload-error:has-text('请按文件格式改名')").wait_for()  # refused before sending
    assert page.locator("#versions").count() == 0

    # In English, and a file whose name is markup (no "/": a path's last part is its name).
    ran = alerts(page)
    img = "<img src=x onerror=alert(1)>"
    page.context.add_cookies([{"name": "assay_lang", "value": "en", "url": live.url}])
    page.reload()
    page.locator("h2:has-text('Upload the first version')").wait_for()
    page.set_input_files("#file-input", files=[{"name": f"{img}.xlsx", "mimeType": "text/plain", "buffer": b"x"}])
    page.locator(f"#upload-error:has-text('{img}.xlsx was not uploaded')").wait_for()
    assert "rename the file after its format" in page.locator("#upload-error").inner_text()
    page.set_input_files("#file-input", files=[{"name": f"{img}.jsonl", "mimeType": "text/plain",
                                                "buffer": jsonl([{"id": "a", "input": "q"}])}])
    page.locator("#preview-title:has-text('Rows of version 1')").wait_for()
    assert page.locator("#versions td.file").inner_text() == f"{img}.jsonl"
    page.set_input_files("#file-input", files=[{"name": "d.csv", "mimeType": "text/csv",
                                                "buffer": "id,input,score\np1,北京,0.5\n".encode()}])
    page.locator("#preview-title:has-text('Rows of version 2')").wait_for()
    page.locator("#preview tbody tr").first.wait_for()  # the rows come after the title
    assert page.locator("#preview tbody td").all_inner_texts() == ["1", "p1", "北京", "0.5"]

    # Delete a version, then the dataset (refused while a task grades it, linking to it).
    page.click("#versions tr[data-number='1'] button.delete-version")
    page.click("dialog.confirm button[value=ok]")
    page.locator("#versions tbody tr").nth(1).wait_for(state="detached")
    assert page.locator("#versions tbody tr").get_attribute("data-number") == "2"
    dataset_id = page.url.split("?")[0].rsplit("/", 1)[1]
    with live.api() as api:
        preset = api.get("/evaluators/presets").json()["data"][0]["id"]
        task = api.post("/tasks", json={"name": "用它的任务", "datasetId": dataset_id,
                                        "evaluators": [{"evaluatorId": preset}]}).json()["data"]
    page.click("#delete-dataset")
    page.click("dialog.confirm button[value=ok]")
    page.locator("#refusal:has-text('用它的任务')").wait_for()  # and a link to it
    assert page.get_attribute("#refusal ul.blocking a", "href") == f"/tasks/{task['id']}"
    with live.api() as api:
        assert api.delete(f"/tasks/{task['id']}").status_code == 200
    page.click("#delete-dataset")
    page.click("dialog.confirm button[value=ok]")
    page.wait_for_url("**/datasets")
    with live.api() as api:
        assert api.get(f"/datasets/{dataset_id}").status_code == 404
    assert page.locator("main img, main script").count() == 0 and ran == []


def test_a_dataset_is_renamed_and_described_on_its_page_in_both_languages(page, live):
    dataset_id = make_dataset(page, live, f"旧名字 {uuid.uuid4().hex[:6]}")
    page.click("#edit-details")
    page.fill("#edit-name", "   ")
    page.click("#save-details")  # an empty name: refused at the field, nothing sent
    page.locator("#edit-name-error:has-text('必填')").wait_for()
    assert page.evaluate("document.activeElement.id") == "edit-name"
    new_name = f"新名字 {uuid.uuid4().hex[:6]} {XSS}"
    page.fill("#edit-name", new_name)
    page.fill("#edit-description", "第二版说明")
    page.click("#save-details")
    page.locator(f".toast:has-text('已保存“{new_name}”')").wait_for()
    page.locator("#dataset-description:has-text('第二版说明')").wait_for()
    assert page.locator("#dataset-name").inner_text() == new_name and page.locator("#details-form").is_hidden()
    with live.api() as api:
        stored = api.get(f"/datasets/{dataset_id}").json()["data"]
    assert (stored["name"], stored["description"]) == (new_name, "第二版说明")

    page.context.add_cookies([{"name": "assay_lang", "value": "en", "url": live.url}])
    page.reload()
    page.get_by_role("button", name="Rename or describe").click()
    page.get_by_label("Description").fill("")
    page.get_by_role("button", name="Cancel").click()  # cancelled: the form shows what is stored again
    page.get_by_role("button", name="Rename or describe").click()
    assert page.get_by_label("Description").input_value() == "第二版说明"
    page.get_by_label("Description").fill("")
    page.get_by_role("button", name="Save").click()
    page.locator(".toast:has-text('Saved')").wait_for()
    page.locator("#dataset-description").wait_for(state="detached")
    with live.api() as api:
        assert api.get(f"/datasets/{dataset_id}").json()["data"]["description"] is None
    assert page.locator("main img").count() == 0


def test_a_file_without_an_output_column_is_taken_with_a_warning_saying_so(page, live):
    """A CSV of question,answer loads (its columns become metadata), but every run would grade an
    empty output: the page says which columns it has and what to name the answers."""
    make_dataset(page, live, f"没有输出 {uuid.uuid4().hex[:6]}")
    assert "output（要评估的回答）" in page.locator("#columns-hint").inner_text()
    page.set_input_files("#file-input", files=[{"name": "qa.csv", "mimeType": "text/csv",
                                                "buffer": "question,answer\n你好,世界\n".encode()}])
    warning = page.locator("#no-output")
    warning.wait_for()
    assert "没有 output 列（它的列：question、answer）" in warning.inner_text()
    page.set_input_files("#file-input", files=[{"name": "qa.csv", "mimeType": "text/csv",
                                                "buffer": "question,output\n你好,世界\n".encode()}])
    page.locator("#preview-title:has-text('第 2 版')").wait_for()
    page.locator("#preview tbody tr").first.wait_for()
    assert warning.count() == 0
