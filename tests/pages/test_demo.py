"""A first look that isn't empty (issue 22): ``assay serve --demo`` prints how to sign in and
fills a workspace through the API: the example evaluators (Python length check, Node.js keyword
check, one made from the regex preset), a small Chinese dataset made on /datasets (a JSONL
upload), a task grading it with weights, and a finished run, which the pages show. A second start makes nothing twice."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import httpx2 as httpx
import pytest
from pages_support import Live, sign_in, stop
from pg_server import free_port

from assay.judges.local.find import available

pytestmark = pytest.mark.browser


def start_demo(folder: Path) -> tuple[subprocess.Popen, str, str, Path]:
    port = free_port()
    log = folder / f"demo-{port}.log"
    env = {**os.environ, "ASSAY_JUDGE_CACHE": "off"}
    env.pop("ASSAY_DATABASE_URL", None)
    with open(log, "wb") as out:
        process = subprocess.Popen([sys.executable, "-m", "assay.cli.main", "serve", "--demo", "--host", "127.0.0.1",
                                    "--port", str(port), "--log-level", "warning"], cwd=folder, env=env,
                                   stdout=out, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 60
    while not (found := re.search(r"paste this token \(user 'demo'\):\n(\S+)", log.read_text())):
        assert process.poll() is None and time.monotonic() < deadline, log.read_text()
        time.sleep(0.1)
    return process, f"http://127.0.0.1:{port}", found.group(1), log


def finished_run(url: str, token: str) -> tuple[dict, dict]:
    deadline = time.monotonic() + 120
    with httpx.Client(base_url=url + "/api/v1", headers={"Authorization": f"Bearer {token}"}, timeout=10) as api:
        while True:
            assert time.monotonic() < deadline, "the demo run did not finish"
            try:
                tasks = api.get("/tasks").json()["data"]
                runs = api.get(f"/tasks/{tasks[0]['id']}/runs").json()["data"] if tasks else []
            except httpx.TransportError:
                tasks, runs = [], []
            if runs and runs[0]["status"] == "completed":
                return tasks[0], runs[0]
            time.sleep(0.2)


def test_serve_demo_opens_a_workspace_with_a_finished_run(browser, tmp_path, shots):
    process, url, token, log = start_demo(tmp_path)
    try:
        task, run = finished_run(url, token)
        assert task["name"] == "客服回答质量" and task["sampleCount"] == 8
        assert [(e["name"], e["weight"]) for e in task["evaluators"]] == [("长度检查", 1), ("关键词检查", 2)]
        assert run["summary"]["samples"] == 8 and run["summary"]["passRate"] == 0.75  # q03 and q08 fall short
        with httpx.Client(base_url=url + "/api/v1", headers={"Authorization": f"Bearer {token}"}) as api:
            dataset = api.get(f"/datasets/{task['datasetId']}").json()["data"]
        assert (dataset["name"], dataset["latest"]["sourceName"], dataset["latest"]["rowCount"]) == (
            "客服问答", "客服问答.jsonl", 8)
        assert dataset["taskNames"] == ["客服回答质量"]
        context = browser.new_context(locale="zh-CN", viewport={"width": 1366, "height": 768})
        page = context.new_page()
        sign_in(page, Live(url, token))
        page.wait_for_url("**/evaluators")
        page.goto(url + "/evaluators?tab=custom")
        page.locator("td.name:has-text('关键词检查')").wait_for()
        assert {"长度检查", "关键词检查", "订单号格式"} <= set(page.locator("td.name").all_inner_texts())
        page.goto(f"{url}/tasks/{task['id']}")
        page.locator("svg.chart circle.dot").wait_for()
        page.screenshot(path=shots / "demo-task.png", full_page=True)
        page.goto(f"{url}/runs/{run['id']}")
        page.locator("#run-status.run-completed").wait_for()
        assert "客服问答 · 第 1 版 · 8 行" in page.locator("#run-dataset").inner_text()
        page.screenshot(path=shots / "demo-run.png", full_page=True)
        page.click("#run-dataset a")
        page.locator("#preview tbody tr").nth(7).wait_for()
        assert "我的订单什么时候发货？" in page.locator("#preview").inner_text()
        context.close()
    finally:
        stop(process)
    process, url, token, _ = start_demo(tmp_path)  # the same database: nothing is made twice
    try:
        finished_run(url, token)
        time.sleep(1)
        with httpx.Client(base_url=url + "/api/v1", headers={"Authorization": f"Bearer {token}"}) as api:
            assert len(api.get("/tasks").json()["data"]) == 1
            assert len(api.get("/datasets").json()["data"]) == 1
            toy = available() is None  # with assay[local-judge], the toy LLM evaluator too (tests/cli/test_demo_toy_judge)
            assert len(api.get("/evaluators", params={"isPreset": "false"}).json()["data"]) == 3 + toy
    finally:
        stop(process)
    assert "could not be made" not in log.read_text()


def test_the_sign_in_hint_makes_a_token_this_server_accepts(tmp_path):
    """The sign-in page's hint, typed as shown beside `make serve`'s server, gives a token that
    server takes (issue 36: the hint's `assay tokens create USER` wrote to ./assay.db, while the
    demo serves ./assay-demo.db, so its token was refused)."""
    process, url, token, _ = start_demo(tmp_path)
    try:
        finished_run(url, token)  # the server answers, and its demo is made
        for lang in ("en", "zh-CN"):
            page = httpx.get(url + "/signin", headers={"Accept-Language": lang}, timeout=10).text
            shown = re.search(r"`(assay tokens create demo --database-url [^`]+)`", page)
            assert shown, page
            command = shown.group(1).split()
            made = subprocess.run([sys.executable, "-m", "assay.cli.main", *command[1:]], cwd=tmp_path,
                                  capture_output=True, text=True, timeout=60)
            assert made.returncode == 0, made.stderr
            token = made.stdout.strip().splitlines()[-1]
            answer = httpx.get(url + "/api/v1/evaluators", headers={"Authorization": f"Bearer {token}"}, timeout=10)
            assert answer.status_code == 200, answer.text
    finally:
        stop(process)
