"""Live runs, in a real browser (issue 22): while a run goes, its page shows progress, pass
rate and per-evaluator figures that change (polled twice a second from the stored results,
summarised by the same function as the finished run's); the pass rate says what it counts
(errors apart); the run page shows the version of each evaluator it graded, the config it graded with, and which
changed since."""

from __future__ import annotations

import json
import time
import uuid

import pytest
from pages_support import task_on_dataset

pytestmark = pytest.mark.browser

SLOW = ("import time\n"
        "def evaluate(input, output, expected, metadata):\n"
        "    time.sleep(0.05)\n"
        "    if output == 'boom':\n"
        "        raise ValueError('boom')\n"
        "    return {'passed': output == expected, 'score': 1.0 if output == expected else 0.0}\n")
ROWS = [{"id": f"r{i:02d}", "input": f"问题{i}", "output": "boom" if i == 0 else ("对" if i % 4 else "错"),
         "expected": "boom" if i == 0 else "对"} for i in range(96)]
# r00: the code evaluator errs and exact match passes, so the sample is an error: left out of
# the pass rate, as the evaluator's error is left out of its own


def test_a_run_shows_live_figures_and_the_versions_it_graded(page, live, shots):
    with live.api() as api:
        slow = api.post("/evaluators", json={"name": f"慢速检查 {uuid.uuid4().hex[:4]}", "type": "code",
                                             "config": {"language": "python", "code": SLOW}}).json()["data"]
        exact = next(p for p in api.get("/evaluators/presets").json()["data"]
                     if p["config"]["presetType"] == "exact_match")
        task = task_on_dataset(api, "实时进度", [{"evaluatorId": slow["id"], "weight": 2},
                                                 {"evaluatorId": exact["id"]}], ROWS)
        run = api.post(f"/tasks/{task['id']}/runs").json()["data"]
    page.goto(f"{live.url}/runs/{run['id']}")
    seen: set[str] = set()
    live_tables = 0
    deadline = time.monotonic() + 120
    while not page.locator("#run-status.run-completed").count():
        assert time.monotonic() < deadline, "the run did not finish"
        seen.add(page.locator("#run-done").inner_text() if page.locator("#run-done").count() else "")
        if page.locator("#run-status.run-running").count() and page.locator("#per-evaluator tbody tr").count():
            live_tables += 1
        page.wait_for_timeout(100)
    partial = {s for s in seen if s and not s.startswith(("0/", "192/"))}
    assert partial, f"no figures between the start and the end: {seen}"
    assert live_tables > 0, "per-evaluator figures appeared only at the end"
    page.screenshot(path=shots / "run-live-done.png", full_page=True)

    definition = page.locator("#pass-rate-definition").inner_text()
    assert definition.startswith("通过率 = 通过 ÷（通过 + 未通过）") and "除去 1 个" in definition
    assert page.locator("#pass-rate").get_attribute("title") == definition
    rows = page.locator("#per-evaluator tbody tr")
    assert rows.nth(0).locator("td").nth(3).inner_text() == "1"  # the code evaluator's one error, apart
    assert rows.nth(0).locator("td").nth(5).inner_text().startswith("75.8%")  # 72 of the 95 it graded
    versions = page.locator("#graded-with tbody tr")
    assert versions.count() == 2 and page.locator("#graded-with .badge").count() == 0
    exact_config = versions.nth(1).locator(".graded-config")
    exact_config.locator("summary").click()  # the config it graded with, every default filled in
    assert json.loads(exact_config.locator("pre").inner_text()) == {
        "presetType": "exact_match", "params": {"trim": False, "ignore_case": False}}
    assert json.loads(versions.nth(0).locator(".graded-config pre").text_content())["timeout"] == 5000
    with live.api() as api:
        changed = SLOW.replace("0.05", "0.01")
        assert api.put(f"/evaluators/{slow['id']}", json={"config": {"language": "python", "code": changed}}
                       ).status_code == 200
    page.reload()
    page.locator("#graded-with tbody tr").first.wait_for()
    assert page.locator("#graded-with tbody tr").nth(0).locator(".badge").inner_text() == "之后已修改"
