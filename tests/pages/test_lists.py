"""Lists that scale, in a real browser (issue 22): the custom evaluators and the tasks are
searched, filtered, sorted and paged on the server, the state lives in the URL (reload, back),
and a task's runs are paged."""

from __future__ import annotations

import re
import uuid

import pytest
from pages_support import task_on_dataset

pytestmark = pytest.mark.browser

PY = "def evaluate(input, output, expected, metadata):\n    return {'passed': True}\n"


@pytest.fixture(scope="module")
def many(live) -> str:
    """25 code evaluators named "<tag> 00".."<tag> 24" (odd ones in Node.js), and their tag."""
    tag = f"列表{uuid.uuid4().hex[:6]}"
    with live.api() as api:
        for i in range(25):
            language = "nodejs" if i % 2 else "python"
            code = PY if language == "python" else "module.exports = () => ({ passed: true });\n"
            response = api.post("/evaluators", json={"name": f"{tag} {i:02d}", "type": "code",
                                                     "config": {"language": language, "code": code}})
            assert response.status_code == 200, response.text
    return tag


def names(page) -> list[str]:
    return page.locator("table.custom tbody td.name").all_inner_texts()


def test_search_sort_filter_and_page_live_in_the_url(page, live, many, shots):
    page.goto(live.url + "/evaluators?tab=custom")
    page.fill("#search", many)
    page.wait_for_url(re.compile(r"q=" + re.escape(many[:2]) + "|q=%"))
    page.locator("#page-info:has-text('共 25 条')").wait_for()
    assert len(names(page)) == 20
    page.click("th button[data-sort=name]")
    page.wait_for_url(re.compile(r"sort=name&order=asc"))
    page.locator("table.custom tbody tr").first.wait_for()
    assert names(page)[:2] == [f"{many} 00", f"{many} 01"]
    page.click("#page-next")
    page.wait_for_url(re.compile(r"page=2"))
    page.locator(f"td.name:has-text('{many} 24')").wait_for()
    assert names(page) == [f"{many} {i:02d}" for i in range(20, 25)]
    page.screenshot(path=shots / "evaluators-paged.png", full_page=True)
    page.reload()
    page.locator(f"td.name:has-text('{many} 24')").wait_for()
    assert page.locator("#search").input_value() == many and page.locator("#page-info").inner_text().startswith("第 2")
    page.go_back()
    page.wait_for_url(re.compile(r"^(?!.*page=2)"))
    page.locator(f"td.name:has-text('{many} 00')").wait_for()
    page.select_option("#language-filter", "nodejs")
    page.wait_for_url(re.compile(r"language=nodejs"))
    page.locator("#page-info:has-text('共 12 条')").wait_for()
    assert all(int(n.split()[-1]) % 2 == 1 for n in names(page))
    page.select_option("#owner-filter", "me")
    page.locator("#page-info:has-text('共 12 条')").wait_for()
    page.fill("#search", many + " nothing-like-this")
    page.locator(".state.empty").wait_for()


def test_the_task_list_is_searched_and_a_tasks_runs_are_paged(page, live, shots):
    tag = f"任务{uuid.uuid4().hex[:6]}"
    with live.api() as api:
        evaluator = api.get("/evaluators/presets").json()["data"][0]["id"]
        rows = [{"id": "a", "input": "q", "output": "x", "expected": "x"}]
        for name in ("订单", "客服"):
            task = task_on_dataset(api, f"{tag} {name}", [{"evaluatorId": evaluator}], rows)
        for _ in range(21):
            assert api.post(f"/tasks/{task['id']}/runs").status_code == 200
    page.goto(live.url + f"/tasks?q={tag}%20客服")
    page.locator("table tbody tr").first.wait_for()
    assert page.locator("table tbody td.name").all_inner_texts() == [f"{tag} 客服"]
    page.goto(live.url + f"/tasks/{task['id']}")
    page.locator("#page-info:has-text('共 21 条')").wait_for()
    assert page.locator("table tbody tr").count() == 20
    page.click("#page-next")
    page.wait_for_url(re.compile(r"page=2"))
    page.locator("#page-info:has-text('第 2 / 2 页')").wait_for()
    assert page.locator("table tbody tr").count() == 1
