"""What the product writes reaches the Chinese pages in Chinese (issue 22, item 6): a preset's
failure reason, a sandbox timeout, an API error on save, the reasons of a run's results; user
code's own reason stays as written. The English pages say the same things in English."""

from __future__ import annotations

import re

from pages_support import task_on_dataset

SPIN = "def evaluate(input, output, expected, metadata):\n    while True:\n        pass\n"


def replace_code(page, code: str) -> None:
    page.click("#code .cm-content")
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    page.keyboard.insert_text(code)


def test_a_preset_failure_is_said_in_the_pages_language(page, live, shots):
    page.goto(live.url + "/evaluators")
    page.click("table.presets a:has-text('精确匹配')")
    page.locator(".test-inputs [name=output]").wait_for()
    page.fill(".test-inputs [name=output]", "巴黎")
    page.fill(".test-inputs [name=expected]", "北京")
    page.click("#run-test")
    page.locator("#verdict.failed").wait_for()
    assert page.locator("#result-reason").inner_text() == "输出与期望值在第 0 个字符处不同：实际为 '巴黎'，期望为 '北京'"
    page.screenshot(path=shots / "said-preset-failure-zh.png", full_page=True)
    page.context.add_cookies([{"name": "assay_lang", "value": "en", "url": live.url}])
    page.reload()
    page.locator(".test-inputs [name=output]").wait_for()
    page.fill(".test-inputs [name=output]", "巴黎")
    page.fill(".test-inputs [name=expected]", "北京")
    page.click("#run-test")
    page.locator("#verdict.failed").wait_for()
    assert page.locator("#result-reason").inner_text() == \
        "output differs from expected at character 0: got '巴黎', expected '北京'"


def test_a_sandbox_timeout_and_a_refused_save_are_said_in_chinese(page, live, shots):
    page.goto(live.url + "/evaluators/new")
    page.locator("#code .cm-content").wait_for()
    page.fill("#name", "死循环")
    replace_code(page, SPIN)
    page.fill("#timeout", "300")
    page.fill(".test-inputs [name=output]", "x")
    page.click("#run-test")
    page.locator("#verdict.errored").wait_for()
    assert page.locator("#result-reason").inner_text() == "300 毫秒时限已到，评估器仍在运行，已被停止"
    assert page.locator("#result-error").inner_text().startswith("超时")  # the code in the page's language
    assert page.locator("#result-error").get_attribute("title") == "timeout"  # and as it is, for machines
    page.screenshot(path=shots / "said-sandbox-timeout-zh.png", full_page=True)

    page.fill("#timeout", "99999999")  # above the server's cap, which the form does not know: a 422
    page.keyboard.press("Control+S")
    alert = page.locator(".save-alert .alert.error")
    alert.wait_for()
    assert re.fullmatch(r"config\.timeout：应小于或等于 \d+（毫秒；本部署的 ASSAY_CODE_TIMEOUT_MAX_MS）", alert.inner_text())
    assert "/evaluators/new" in page.url
    page.screenshot(path=shots / "said-save-refused-zh.png", full_page=True)


def test_a_runs_reasons_are_said_in_chinese_and_user_reasons_as_written(page, live, shots):
    with live.api() as api:
        exact = next(e for e in api.get("/evaluators/presets").json()["data"] if e["config"]["presetType"] ==
                     "exact_match")
        own = api.post("/evaluators", json={"name": "自己的理由", "type": "code", "config": {
            "language": "python", "timeout": 5000,
            "code": "def evaluate(input, output, expected, metadata):\n"
                    "    return {'passed': False, 'reason': 'my own words'}\n"}}).json()["data"]
        task = task_on_dataset(api, "说中文的运行", [{"evaluatorId": exact["id"], "weight": 1},
                                                {"evaluatorId": own["id"], "weight": 1}],
                               [{"id": "s0", "input": "q", "output": "no", "expected": "yes"}])
        run = api.post(f"/tasks/{task['id']}/runs").json()["data"]
    page.goto(f"{live.url}/runs/{run['id']}")
    page.locator("td.reason", has_text="输出与期望值在第 0 个字符处不同").wait_for()
    assert page.locator("td.reason", has_text="my own words").count() == 1
    page.screenshot(path=shots / "said-run-reasons-zh.png", full_page=True)


MISSING_COLON = ("def evaluate(input, output, expected, metadata):\n    a = 1\n    b = 2\n    c = 3\n"
                 "    if output == expected and len(output) > 0\n        return {'passed': True}\n"
                 "    return {'passed': False}\n")
UNCLOSED_JS = "module.exports = async function (input, output) {\n  return { passed: output === 'x' };\n"


def test_a_syntax_error_says_where_and_what_in_chinese(page, live):
    """代码第 5 行第 N 列：语法错误（缺少 ':'）, on save and on a test run, Python's parser and
    V8's messages both said in Chinese; the line is highlighted in the editor."""
    try:
        compile(MISSING_COLON, "<evaluator>", "exec")
    except SyntaxError as exc:
        column = exc.offset
    page.goto(live.url + "/evaluators/new")
    page.locator("#code .cm-content").wait_for()
    page.fill("#name", "少了冒号")
    replace_code(page, MISSING_COLON)
    page.keyboard.press("Control+S")
    alert = page.locator(".save-alert .alert.error")
    alert.wait_for()
    assert alert.inner_text() == f"代码第 5 行第 {column} 列：语法错误（缺少 ':'）"
    assert "if output == expected" in page.locator("#code .cm-error-line").inner_text()
    page.fill(".test-inputs [name=output]", "x")
    page.click("#run-test")
    refused = page.locator(".test-panel .alert.error")
    refused.wait_for()
    assert refused.inner_text() == f"代码第 5 行第 {column} 列：语法错误（缺少 ':'）"

    page.select_option("#language", "nodejs")
    replace_code(page, UNCLOSED_JS)
    page.keyboard.press("Control+S")
    page.locator(".save-alert .alert.error:has-text('代码第')").wait_for()
    assert "语法错误（代码意外结束" in page.locator(".save-alert .alert.error").inner_text()
