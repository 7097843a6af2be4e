"""The editor says how long a test waited, apart from the evaluation's own time (issue 36 item 6:
a test that waited 5 s said "耗时 1.1 ms" and nothing else). ``assay serve`` with one sandbox
worker, held by a sleeping evaluator: the editor's test of a one-liner waits for it, and the
page shows the wait (most of the time) beside the evaluation's few milliseconds."""

from __future__ import annotations

import re
import threading

import httpx2 as httpx
import pytest
from pages_support import serving, signed_in_tab

pytestmark = pytest.mark.browser

SLEEPER = "import time\n\ndef evaluate(input, output, expected, metadata):\n    time.sleep(30)\n"


def ms(text: str) -> float:
    return float(text.removesuffix(" ms"))


def test_the_editor_shows_a_wait_apart_from_the_evaluations_own_time(browser, tmp_path, shots):
    with serving(tmp_path, ASSAY_SANDBOX_WORKERS="1") as live, signed_in_tab(browser, live) as page:
        api = live.api()
        created = api.post("/evaluators", json={"name": "sleeper", "type": "code", "config": {
            "language": "python", "code": SLEEPER, "timeout": 3000}})
        assert created.status_code == 200, created.text
        page.goto(live.url + "/evaluators/new")
        page.locator("#code .cm-content").wait_for()
        page.fill(".test-inputs [name=output]", "a")
        page.fill(".test-inputs [name=expected]", "a")
        page.click("#run-test")  # the template's evaluator, alone: the worker starts
        page.locator("#verdict").wait_for()
        held = threading.Thread(target=api.post, args=(f"/evaluators/{created.json()['data']['id']}/test",),
                                kwargs={"json": {"input": "q", "output": "a", "expected": "a"}})
        held.start()
        try:
            metrics = httpx.Client(base_url=live.url, headers={"Authorization": f"Bearer {live.token}"}, timeout=10)
            for _ in range(500):  # until the sleeper holds the one worker (a bound, not a measure)
                if re.search(r"^assay_evaluations_in_flight\{[^}]*\} 1", metrics.get("/metrics").text, re.M):
                    break
                page.wait_for_timeout(20)
            else:
                pytest.fail("the sleeper never reached the sandbox")
            page.click("#run-test")
            page.locator("#result-waited").wait_for(timeout=30_000)
        finally:
            held.join(60)
        page.screenshot(path=shots / "editor-waited.png", full_page=True)
        waited, own = ms(page.locator("#result-waited").inner_text()), ms(page.locator("#result-latency").inner_text())
        assert waited >= 1000 and own < waited / 4, (waited, own)  # most of the 3 s was the wait, said apart
        assert "排队" in page.locator("dl.facts").inner_text()
