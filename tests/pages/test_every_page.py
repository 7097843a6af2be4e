"""Every page at 1366x768 and at 375x812 (issue 22): a screenshot of each saved (under the
screenshots folder, pages/), no horizontal scroll on a phone, and axe-core (web/'s npm
devDependency, injected into the page) finding no serious or critical accessibility violation."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from pages_support import policy_violations, serious_violations, signed_in_tab, task_on_dataset, wait_until

pytestmark = pytest.mark.browser

SIZES = [(1366, 768), (375, 812)]


@pytest.fixture(scope="module")
def places(live) -> dict[str, str]:
    """Every kind of page, with real ids behind it."""
    with live.api() as api:
        presets = {p["config"]["presetType"]: p["id"] for p in api.get("/evaluators/presets").json()["data"]}
        rows = [{"id": f"s{i}", "input": f"问题 {i}", "output": "北京" if i % 2 else "上海", "expected": "北京",
                 "context": "一段很长的上下文，" * 40, "source": "https://example.com/" + "x" * 200}
                for i in range(4)]  # long cells and an unbroken one: the preview must not widen the page
        task = task_on_dataset(api, "每页检查", [{"evaluatorId": presets["exact_match"]}], rows,
                               "每页检查的数据_" + "x" * 120)  # a long unbroken name must wrap, not widen the page
        run = api.post(f"/tasks/{task['id']}/runs").json()["data"]
        deadline = time.monotonic() + 60
        while api.get(f"/runs/{run['id']}").json()["data"]["status"] != "completed":
            assert time.monotonic() < deadline
            time.sleep(0.1)
    return {"evaluators": "/evaluators", "evaluators-custom": "/evaluators?tab=custom",
            "editor-new": "/evaluators/new", "editor-preset": f"/evaluators/{presets['regex']}",
            "tasks": "/tasks", "task": f"/tasks/{task['id']}", "run": f"/runs/{run['id']}",
            "sample": f"/runs/{run['id']}/samples/s0", "not-found": "/no/such/page",
            "datasets": "/datasets", "dataset": f"/datasets/{task['datasetId']}", "task-new": "/tasks/new",
            "task-edit": f"/tasks/{task['id']}/edit", "users": "/users", "account": "/account"}


@pytest.fixture(scope="module")
def signed_in(browser, live):
    with signed_in_tab(browser, live) as tab:
        yield tab


def settle(page) -> None:
    """Wait until the page's script has drawn (no loading state left)."""
    wait_until(page, "document.querySelector('main') && !document.querySelector('.state.loading')"
                     " && document.querySelector('main').children.length > 0")
    page.wait_for_timeout(150)


@pytest.mark.parametrize("name", ["evaluators", "evaluators-custom", "editor-new", "editor-preset", "tasks", "task",
                                  "run", "sample", "not-found", "datasets", "dataset",
                                  "task-new", "task-edit", "users", "account"])
def test_each_page_fits_a_phone_and_passes_axe(signed_in, live, places, shots, name):
    page = signed_in
    folder: Path = shots / "pages"
    folder.mkdir(exist_ok=True)
    problems = policy_violations(page)  # the content-security policy refuses nothing the page does
    for width, height in SIZES:
        page.set_viewport_size({"width": width, "height": height})
        page.goto(live.url + places[name])
        settle(page)
        page.screenshot(path=folder / f"{name}-{width}x{height}.png", full_page=True)
        overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
        if overflow > 0:
            problems.append(f"{width}px: {overflow}px of horizontal scroll")
        problems += [f"{width}px: {v}" for v in serious_violations(page)]
    assert not problems, problems


def test_the_signin_page_fits_a_phone_and_passes_axe(browser, live, shots):
    context = browser.new_context(locale="zh-CN", viewport={"width": 375, "height": 812})
    page = context.new_page()
    page.goto(live.url + "/signin")
    page.screenshot(path=shots / "signin-375x812.png")
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    assert serious_violations(page) == []
    context.close()
