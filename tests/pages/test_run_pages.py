"""The run pages in a real browser: a task's runs with their pass-rate trend, a run's live
progress, per-evaluator figures, score histogram and filterable failures, and a sample's
full results."""

from __future__ import annotations

import time

import pytest
from pages_support import task_on_dataset, wait_until

pytestmark = pytest.mark.browser

ROWS = [{"id": f"q{i}", "input": f"问题 {i}", "output": "北京是中国的首都" if i % 3 else "上海", "expected": "北京是中国的首都"}
        for i in range(12)]


def finished_run(api, task_id: str) -> dict:
    run = api.post(f"/tasks/{task_id}/runs").json()["data"]
    deadline = time.monotonic() + 60
    while run["status"] in ("queued", "running"):
        assert time.monotonic() < deadline, run
        time.sleep(0.1)
        run = api.get(f"/runs/{run['id']}").json()["data"]
    assert run["status"] == "completed", run
    return run


@pytest.fixture(scope="module")
def task(live):
    with live.api() as api:
        presets = {e["config"]["presetType"]: e["id"] for e in api.get("/evaluators/presets").json()["data"]}
        task = task_on_dataset(api, "首都问答", [{"evaluatorId": presets["exact_match"]},
                                                 {"evaluatorId": presets["similarity"]}], ROWS, "capitals")
        finished_run(api, task["id"])
        return task


def test_the_task_page_lists_runs_with_a_trend_and_starts_one(page, live, task, shots):
    page.goto(live.url + "/tasks")
    page.click(f"a[href='/tasks/{task['id']}']")
    page.locator("svg.chart circle.dot").first.wait_for()
    assert page.locator("table tbody tr").count() == 1
    page.click("#start-run")
    page.wait_for_url("**/runs/*")
    page.locator("#run-status.run-completed").wait_for()
    page.go_back()
    page.locator("svg.chart polyline.line").wait_for(state="attached")
    assert page.locator("svg.chart circle.dot").count() == 2
    page.screenshot(path=shots / "task.png", full_page=True)


def test_a_run_page_shows_figures_histogram_and_failures(page, live, task, shots):
    with live.api() as api:
        run = api.get(f"/tasks/{task['id']}/runs").json()["data"][0]
    page.goto(f"{live.url}/runs/{run['id']}")
    page.locator("#run-status.run-completed").wait_for()
    assert page.locator("#pass-rate").inner_text() == "66.7%"
    assert page.locator("#per-evaluator tbody tr").count() == 2
    page.locator("#histogram svg rect.bar").first.wait_for()
    counts = page.eval_on_selector_all("#histogram rect.bar", "bars => bars.map(b => Number(b.dataset.count))")
    assert sum(counts) == 24
    page.locator("#failures tbody tr").first.wait_for()
    assert page.locator("#failures tbody tr").count() == 8  # 4 samples, failed by both evaluators
    page.screenshot(path=shots / "run.png", full_page=True)

    page.select_option("#filter-evaluator", label="精确匹配")
    wait_until(page, "document.querySelectorAll('#failures tbody tr').length === 4")
    page.select_option("#filter-status", "error")
    page.locator(".state.empty").wait_for()
    page.select_option("#filter-status", "")
    page.locator("#failures tbody tr").first.wait_for()
    page.click("#failures a:has-text('q0')")
    page.wait_for_url("**/samples/q0")
    page.locator("article.result").first.wait_for()
    assert page.locator("article.result").count() == 2
    assert "上海" in page.locator(".sample-row").inner_text()
    page.screenshot(path=shots / "sample.png", full_page=True)


def test_a_run_page_leaves_an_errored_sample_out_of_the_mean_score(page, live):
    """A code evaluator raises on one sample: the page's mean score (and its interval) is over
    the other samples, as the API's and `assay run`'s are, and says one was left out."""
    raises = ("def evaluate(input, output, expected, metadata):\n"
              "    if input == '问题 1':\n        raise ValueError('cannot grade this one')\n"
              "    return {'passed': True, 'score': 0.5}\n")
    with live.api() as api:
        presets = {e["config"]["presetType"]: e["id"] for e in api.get("/evaluators/presets").json()["data"]}
        code = api.post("/evaluators", json={"name": "raises once", "type": "code",
                                             "config": {"language": "python", "code": raises}}).json()["data"]
        task = task_on_dataset(api, "errored", [{"evaluatorId": presets["exact_match"]}, {"evaluatorId": code["id"]}],
                               ROWS, "errored")
        run = finished_run(api, task["id"])
    decided = [((1.0 if r["output"] == r["expected"] else 0.0) + 0.5) / 2 for r in ROWS if r["id"] != "q1"]
    mean = sum(decided) / len(decided)
    with_error = (sum(decided) + 1.0) / len(ROWS)  # q1's exact_match alone scored it 1
    assert f"{mean:.3f}" != f"{with_error:.3f}"
    page.goto(f"{live.url}/runs/{run['id']}")
    page.locator("#run-status.run-completed").wait_for()
    assert page.locator("#mean-score").inner_text() == f"{mean:.3f}"
    lo, hi = run["summary"]["meanScoreCi"]
    assert page.locator("#mean-score-ci").inner_text().endswith(f" [{lo:.3f}, {hi:.3f}]")  # "95% CI", "95% 置信区间"
    left_out = page.locator("#pass-rate-ci").inner_text()
    assert "1 left out" in left_out or "1 个未计入" in left_out, left_out
