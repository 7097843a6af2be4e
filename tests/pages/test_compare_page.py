"""Intervals and run-to-run comparison in a real browser: the trend chart draws each run's
interval, a run shows its interval and what was left out, and the compare view (reached from
the task's runs) shows per-evaluator deltas with intervals and p-values and the flipped
samples with both runs' reasons side by side."""

from __future__ import annotations

import json

import pytest
from pages_support import task_on_dataset, wait_until
from test_run_pages import finished_run

pytestmark = pytest.mark.browser

BASE = [{"id": f"q{i}", "output": "北京" if i < 16 else "上海", "expected": "北京"} for i in range(20)]
NEW = [dict(r, output="上海" if i < 9 else ("北京" if i == 18 else r["output"])) for i, r in enumerate(BASE)]


@pytest.fixture(scope="module")
def runs(live):
    with live.api() as api:
        presets = {e["config"]["presetType"]: e["id"] for e in api.get("/evaluators/presets").json()["data"]}
        task = task_on_dataset(api, "对比任务", [{"evaluatorId": presets["exact_match"]},
                                                 {"evaluatorId": presets["contains"]}], BASE, "对比数据")
        base = finished_run(api, task["id"])
        body = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in NEW).encode()
        uploaded = api.post(f"/datasets/{task['datasetId']}/versions", params={"filename": "new.jsonl"}, content=body)
        assert uploaded.status_code == 200, uploaded.text
        new = finished_run(api, task["id"])
        return task, base, new


def test_trend_and_run_show_intervals(page, live, runs, shots):
    task, base, _ = runs
    page.goto(f"{live.url}/tasks/{task['id']}")
    page.locator("svg.chart path.ci").first.wait_for(state="attached")
    assert page.locator("svg.chart path.ci").count() == 2
    lo, hi = base["summary"]["passRateCi"]
    assert f"[{lo * 100:.1f}, {hi * 100:.1f}]" in page.locator(f"tr[data-id='{base['id']}']").inner_text()
    page.goto(f"{live.url}/runs/{base['id']}")
    page.locator("#pass-rate-ci").wait_for()
    assert f"[{lo * 100:.1f}, {hi * 100:.1f}]" in page.locator("#pass-rate-ci").inner_text()


def test_compare_view_from_the_task_page(page, live, runs, shots):
    task, base, new = runs
    page.goto(f"{live.url}/tasks/{task['id']}")
    page.locator("#compare-runs").wait_for()
    assert page.locator("#compare-base").input_value() == base["id"]
    assert page.locator("#compare-new").input_value() == new["id"]
    page.click("#compare-runs")
    page.wait_for_url(f"**/runs/{base['id']}/compare/{new['id']}")
    page.locator("#comparison tbody tr").first.wait_for()
    with live.api() as api:
        doc = api.get(f"/runs/{base['id']}/compare/{new['id']}").json()["data"]
    exact = doc["graders"][0]
    assert exact["toFail"] == [f"q{i}" for i in range(9)] and exact["toPass"] == ["q18"]
    row = page.locator("#comparison tbody tr").first
    lo, hi = exact["deltaCi"]
    assert f"[{lo * 100:+.1f}, {hi * 100:+.1f}]" in row.inner_text()
    assert f"{exact['pValue']:.3f} *" in row.inner_text()  # 9 against 1: p = 0.021
    assert "worse" in (row.get_attribute("class") or "")
    flips = page.locator("#flips tbody tr")
    assert flips.count() == 10
    first = flips.first.locator("td")
    assert first.nth(0).inner_text() == "q0"
    assert first.nth(2).inner_text() == "通过"  # both reasons side by side, in the page's language
    assert first.nth(3).inner_text() == "精确匹配：输出与期望值在第 0 个字符处不同：实际为 '上海'，期望为 '北京'；" \
                                        "包含匹配：输出不包含 '北京'"
    page.select_option("#flips-of", index=1)
    wait_until(page, "document.querySelectorAll('#flips tbody tr').length === 10")
    assert page.locator("#flips tbody tr").first.locator("td").nth(3).inner_text() == \
        "输出与期望值在第 0 个字符处不同：实际为 '上海'，期望为 '北京'"
    page.screenshot(path=shots / "compare.png", full_page=True)


def test_the_default_scope_shows_the_flips_keeps_its_scope_in_the_address_and_fits_a_phone(browser, live):
    """The verdicts never flip here (the regex evaluator fails every sample in both runs) while
    exact match flips 9 samples: the page opens on exact match's flips, not "no sample changed";
    the scope chosen is in the address (a reload keeps it); on a phone nothing scrolls sideways."""
    from pages_support import signed_in_tab

    with live.api() as api:
        presets = {e["config"]["presetType"]: e["id"] for e in api.get("/evaluators/presets").json()["data"]}
        never = api.post("/evaluators", json={"name": "从不通过", "type": "preset", "config": {
            "presetType": "regex", "params": {"pattern": "^never$"}}})
        assert never.status_code == 200, never.text
        task = task_on_dataset(api, "范围任务", [{"evaluatorId": never.json()["data"]["id"]},
                                                 {"evaluatorId": presets["exact_match"]}], BASE, "范围数据")
        base = finished_run(api, task["id"])
        body = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in NEW).encode()
        api.post(f"/datasets/{task['datasetId']}/versions", params={"filename": "new.jsonl"}, content=body)
        new = finished_run(api, task["id"])
    for viewport in ({"width": 1366, "height": 768}, {"width": 375, "height": 812}):
        with signed_in_tab(browser, live, viewport=viewport) as page:
            page.goto(f"{live.url}/runs/{base['id']}/compare/{new['id']}")
            page.locator("#flips tbody tr").first.wait_for()
            assert page.locator("#flips-of option:checked").inner_text() == "精确匹配 (10)"
            assert page.locator("#flips-of option").first.inner_text().endswith("(0)")  # the verdicts: none
            assert page.locator("#flips tbody tr").count() == 10
            assert page.evaluate("document.documentElement.scrollWidth - window.innerWidth") == 0
            hidden = page.evaluate("[...document.querySelectorAll('#comparison td, #flips td')].filter((td) => "
                                   "td.getBoundingClientRect().right > window.innerWidth + 0.5).length")
            assert hidden == 0  # every column in view (a phone shows each row as a card), none scrolled away
            page.select_option("#flips-of", index=0)
            page.locator("#flips-of + *, .state.empty").first.wait_for()
            assert "scope=overall" in page.url
            page.reload()
            page.locator("#flips-of").wait_for()
            assert page.locator("#flips-of").input_value() == "overall"
