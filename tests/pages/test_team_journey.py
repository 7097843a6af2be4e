"""Two people share a workspace in the pages (issue 36 items 1-4), in Chromium: alice (admin)
creates bob and his token on /users; bob sees alice's evaluator read-only under a banner naming
her, copies it and her dataset as his, runs her task (the run is his) and is offered no way to
change or delete it; alice lists her evaluator's versions, diffs and restores one, deletes a run and a task from
the pages, and a refused delete links to the task in its way; a run of a busy loop pauses, is resumed
and cancelled from its page; alice deactivates bob, whose token ends and whose rows stay his.
axe-core checks each new page."""

from __future__ import annotations

import re
import time

import pytest
from pages_support import Live, serious_violations, sign_in, task_on_dataset, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.timeout(300)]  # two browsers, a run, on a busy machine

CODE = "def evaluate(input, output, expected, metadata):\n    return {'passed': output == expected}\n"
RUNAWAY = "def evaluate(input, output, expected, metadata):\n    while True:\n        pass\n"


def _confirm(tab) -> None:
    tab.click("dialog.confirm button.danger")


def _settled(tab) -> None:
    wait_until(tab, "!document.querySelector('.state.loading') && document.querySelector('main').children.length > 0")


def test_two_users_share_work_in_the_pages(browser, live, shots):
    with live.api() as api:
        made = api.post("/evaluators", json={"name": "同事的评估器", "type": "code",
                                             "config": {"language": "python", "code": CODE}})
        evaluator = made.json()["data"]
        task = task_on_dataset(api, "同事的任务", [{"evaluatorId": evaluator["id"]}],
                               [{"id": "a", "output": "x", "expected": "x"}, {"id": "b", "output": "y", "expected": "x"}])

    alice = browser.new_context(locale="zh-CN", viewport={"width": 1366, "height": 768})
    alice.set_default_timeout(20_000)
    tab = alice.new_page()
    sign_in(tab, live)
    tab.wait_for_url("**/evaluators")

    # alice creates bob and issues his token, shown once
    tab.goto(live.url + "/users")
    _settled(tab)
    tab.fill("#new-user-name", "bob")
    tab.click("#new-user button[type=submit]")
    row = tab.locator("tr[data-name=bob]")
    row.locator("input.token-label").fill("bob 的笔记本")
    row.locator("button.issue-token").click()
    secret = row.locator("input.new-token").input_value()
    assert secret.startswith("assay_")
    wait_until(tab, "document.querySelectorAll('tr[data-name=bob] .token-list tbody tr').length === 1")
    assert serious_violations(tab) == []
    tab.goto(live.url + "/account")
    _settled(tab)
    assert "alice" in tab.inner_text("#who") and tab.locator("#manage-users").count() == 1
    assert serious_violations(tab) == []

    bob = browser.new_context(locale="zh-CN", viewport={"width": 1366, "height": 768})
    bob.set_default_timeout(20_000)
    other = bob.new_page()
    sign_in(other, Live(live.url, secret))
    other.wait_for_url("**/evaluators")
    try:
        # alice's evaluator: read-only under a banner naming her, nothing to save
        other.goto(f"{live.url}/evaluators/{evaluator['id']}")
        other.wait_for_selector("#owner-banner")
        assert "alice" in other.inner_text("#owner-banner")
        assert other.locator("#save").count() == 0 and other.inner_text("#read-only") == "只读"
        assert other.get_attribute(".cm-content", "contenteditable") == "false"
        assert other.locator("#name").evaluate("el => el.readOnly")
        assert other.locator("#versions-list .restore-version").count() == 0
        assert other.input_value("#type") == "code" and other.locator("#type").is_disabled()
        assert serious_violations(other) == []
        other.screenshot(path=shots / "team-colleague-evaluator.png", full_page=True)
        other.click("#copy-as-mine")
        other.wait_for_url("**/evaluators/new?copy=*")
        other.wait_for_selector("#save")
        assert other.input_value("#name") == "同事的评估器（副本）"
        other.click("#save")
        other.wait_for_url(re.compile(r".*/evaluators/[0-9a-f-]{36}$"))
        copy_id = other.evaluate("location.pathname.split('/').pop()")
        with live.api() as api:
            copied = api.get(f"/evaluators/{copy_id}").json()["data"]
        assert (copied["owner"], copied["config"]["code"]) == ("bob", CODE)

        # alice's task: bob runs it (the run is his) and is offered no edit or delete
        other.goto(f"{live.url}/tasks/{task['id']}")
        other.wait_for_selector("#owner-banner")
        assert other.locator("#delete-task").count() == 0 and other.locator("#edit-task").count() == 0
        assert serious_violations(other) == []
        other.goto(f"{live.url}/tasks/{task['id']}/edit")  # her task's form: shown, nothing to save
        other.wait_for_selector("#owner-banner")
        assert other.locator("#save").count() == 0 and other.locator("#name").is_disabled()

        # her dataset: read-only, copied as bob's (a dataset of his, version 1, his to change)
        other.goto(f"{live.url}/datasets/{task['datasetId']}")
        other.wait_for_selector("#owner-banner")
        assert other.locator("#delete-dataset").count() == 0 and other.locator("#file-input").count() == 0
        assert other.locator("button.delete-version").count() == 0
        other.click("#copy-as-mine")
        other.wait_for_url(lambda url: "/datasets/" in url and task["datasetId"] not in url)
        other.wait_for_selector("#delete-dataset")
        assert other.locator("#owner-banner").count() == 0 and other.locator("#versions tbody tr").count() == 1

        other.goto(f"{live.url}/tasks/{task['id']}")
        other.wait_for_selector("#owner-banner")
        other.click("#start-run")
        other.wait_for_url("**/runs/*")
        run_id = other.evaluate("location.pathname.split('/').pop()")
        other.wait_for_selector("#delete-run")  # his run, once finished: his to delete
        other.wait_for_selector("a.version-link")
        assert other.get_attribute("a.version-link", "href") == f"/evaluators/{evaluator['id']}?version=1"
        with live.api() as api:
            started = api.get(f"/runs/{run_id}").json()["data"]
            assert started["createdById"] == copied["createdById"]
            assert api.delete(f"/tasks/{task['id']}", headers={"Authorization": f"Bearer {secret}"}).status_code == 403
    finally:
        bob.close()

    try:
        # versions: two more saves, listed; version 1 diffed against the current one, then restored
        with live.api() as api:
            for code in (CODE.replace("==", "!="), CODE.replace("==", "is")):
                assert api.put(f"/evaluators/{evaluator['id']}",
                               json={"config": {"language": "python", "code": code}}).status_code == 200
        tab.goto(f"{live.url}/evaluators/{evaluator['id']}")
        wait_until(tab, "document.querySelectorAll('#versions-list tbody tr').length === 3")
        first = tab.locator("#versions-list tr[data-number='1']")
        first.locator(".diff-version").click()
        assert tab.inner_text("#version-diff h3") == "第 1 版 → 第 3 版"
        diff = tab.locator("#version-diff pre").text_content()  # from version 1 to the current one (3)
        assert ("- " + "    return {'passed': output == expected}\n+ " + "    return {'passed': output is expected}"
                in diff)
        assert tab.locator("#version-diff .add").count() == tab.locator("#version-diff .del").count() == 1
        assert serious_violations(tab) == []
        tab.screenshot(path=shots / "team-versions-diff.png", full_page=True)
        first.locator(".restore-version").click()
        _confirm(tab)
        tab.wait_for_url("**?restored=1")
        tab.locator(".toast", has_text="第 1 版").wait_for()  # said after the reload, with the new number
        wait_until(tab, "document.querySelectorAll('#versions-list tbody tr').length === 4")
        with live.api() as api:
            now = api.get(f"/evaluators/{evaluator['id']}").json()["data"]
        assert (now["version"], now["config"]["code"]) == (4, CODE)
        tab.goto(f"{live.url}/evaluators/{evaluator['id']}?version=2")
        tab.wait_for_selector("#old-version")
        assert tab.get_attribute(".cm-content", "contenteditable") == "false"
        tab.fill("textarea[name=output]", "same")  # version 2 fails equal texts; the current one passes them
        tab.fill("textarea[name=expected]", "same")
        tab.click("#run-test")
        tab.wait_for_selector("#verdict.failed")  # tested as shown, not as stored now

        # a refused delete links to the task in its way; then the run and the task go from the pages
        tab.goto(live.url + "/evaluators?tab=custom")
        tab.locator(f"tr[data-id='{evaluator['id']}'] button.danger").click()
        _confirm(tab)
        tab.wait_for_selector("#refusal ul.blocking a")
        assert tab.get_attribute("#refusal ul.blocking a", "href") == f"/tasks/{task['id']}"
        tab.click("#refusal ul.blocking a")
        tab.wait_for_url(f"**/tasks/{task['id']}")
        tab.wait_for_selector("tr .delete-run")  # bob's run: alice, an admin, may delete it
        assert tab.inner_text("td.started-by") == "bob"
        tab.click("tr .delete-run")
        _confirm(tab)
        wait_until(tab, "document.querySelectorAll('tr .delete-run').length === 0")
        tab.click("#delete-task")
        assert "0" in tab.inner_text("dialog.confirm p")  # what goes with it: its runs (none now)
        _confirm(tab)
        tab.wait_for_url("**/tasks")
        with live.api() as api:
            assert api.get(f"/tasks/{task['id']}").status_code == 404
            assert api.get(f"/runs/{run_id}").status_code == 404
            deadline = time.monotonic() + 5
            while api.delete(f"/evaluators/{evaluator['id']}").status_code != 200:  # nothing blocks it now
                assert time.monotonic() < deadline
                time.sleep(0.1)

        # a runaway evaluator pauses in its run: the page says so, resumes it, and cancels the run
        with live.api() as api:
            runaway = api.post("/evaluators", json={"name": "死循环", "type": "code", "config": {
                "language": "python", "code": RUNAWAY, "timeout": 200}}).json()["data"]
            looping = task_on_dataset(api, "死循环任务", [{"evaluatorId": runaway["id"]}],
                                      [{"id": f"r{i}", "output": "x"} for i in range(40)])
        tab.goto(f"{live.url}/tasks/{looping['id']}")
        tab.click("#start-run")
        tab.wait_for_url("**/runs/*")
        tab.wait_for_selector("#run-paused")
        assert "死循环 连续 5 个样本超时" in tab.inner_text("#run-paused")
        assert tab.inner_text("#run-status") == "运行中"
        assert serious_violations(tab) == []
        tab.screenshot(path=shots / "team-run-paused.png", full_page=True)
        paused_at = int(tab.inner_text("#run-done").split("/")[0])
        tab.click("#resume-run")
        wait_until(tab, f"parseInt(document.querySelector('#run-done').textContent) > {paused_at}")
        tab.wait_for_selector("#run-paused")  # its next samples time out as well: paused again
        tab.click("#cancel-paused")
        wait_until(tab, "document.querySelector('#run-status').textContent === '已取消'")
        assert tab.locator("#run-paused").count() == 0

        # alice deactivates bob: his token ends at once, what he made stays, shown as his
        tab.goto(live.url + "/users")
        _settled(tab)
        tab.click("tr[data-name=bob] button.deactivate-user")
        assert "bob" in tab.inner_text("dialog.confirm p")  # says what happens first
        _confirm(tab)
        tab.wait_for_selector("tr[data-name=bob].deactivated button.activate-user")
        assert "已停用" in tab.inner_text("tr[data-name=bob]")
        assert serious_violations(tab) == []
        with live.api() as api:
            assert api.get("/users/me", headers={"Authorization": f"Bearer {secret}"}).status_code == 401
            assert api.get(f"/evaluators/{copy_id}").json()["data"]["owner"] == "bob"
        tab.goto(f"{live.url}/evaluators?tab=custom")  # his evaluator is still listed, as his
        tab.wait_for_selector(f"tr[data-id='{copy_id}']")
        assert "bob" in tab.inner_text(f"tr[data-id='{copy_id}']")
    finally:
        alice.close()
