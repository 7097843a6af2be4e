"""What the product says when something it needs is not there reaches the Chinese pages in
Chinese (issue 22, item 6): a server whose sandbox service (``SANDBOX_URL``) cannot be reached
says so in the editor's test panel, by the remote client's phrases; the English page says it in
English."""

from __future__ import annotations

import pytest
from pages_support import serving, signed_in_tab
from pg_server import free_port
from test_said_in_chinese import replace_code

pytestmark = pytest.mark.browser

EQUAL = "def evaluate(input, output, expected, metadata):\n    return {'passed': output == expected}\n"


@pytest.fixture(scope="module")
def without_sandbox(tmp_path_factory):
    closed = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    with serving(tmp_path_factory.mktemp("down"), SANDBOX_URL=closed, SANDBOX_SECRET="s") as live:
        yield live, closed


def test_an_unreachable_sandbox_service_is_said_in_the_pages_language(browser, without_sandbox, shots):
    live, closed = without_sandbox
    with signed_in_tab(browser, live, viewport={"width": 1280, "height": 900}) as page:
        page.goto(live.url + "/evaluators/new")
        page.locator("#code .cm-content").wait_for()
        replace_code(page, EQUAL)
        page.fill(".test-inputs [name=output]", "x")
        page.click("#run-test")
        alert = page.locator(".test-panel .alert.error")  # 503 (503002): the evaluator could not run at all
        alert.wait_for()
        said = alert.inner_text()
        assert said.startswith(f"评估器执行失败：沙箱服务 {closed} 无法连接：") and "cannot be reached" not in said, said
        page.screenshot(path=shots / "said-sandbox-down-zh.png", full_page=True)
        page.context.add_cookies([{"name": "assay_lang", "value": "en", "url": live.url}])
        page.reload()
        page.locator("#code .cm-content").wait_for()
        replace_code(page, EQUAL)
        page.fill(".test-inputs [name=output]", "x")
        page.click("#run-test")
        alert.wait_for()
        assert alert.inner_text().startswith(f"evaluator execution failed: the sandbox service at {closed} cannot be "
                                             "reached: ")
