"""Words of other libraries inside the product's sentences reach the Chinese pages in Chinese
(issue 22, item 6): a JSON Schema violation (jsonschema-rs) in a test's reason, and a pattern
the regex engine refuses in the answer to a test."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser


def test_a_schema_violation_is_said_in_chinese(page, live, shots):
    with live.api() as api:
        made = api.post("/evaluators", json={"name": "要有答案", "type": "preset", "config": {
            "presetType": "json_schema", "params": {"schema": {"type": "object", "required": ["答案"],
                                                               "properties": {"分数": {"maximum": 5}}}}}})
        assert made.status_code == 200, made.text
    page.goto(f"{live.url}/evaluators/{made.json()['data']['id']}")
    page.locator(".test-inputs [name=output]").wait_for()
    page.fill(".test-inputs [name=output]", '{"分数": 7}')
    page.click("#run-test")
    page.locator("#verdict.failed").wait_for()
    assert page.locator("#result-reason").inner_text() == \
        '不符合 JSON Schema：$：缺少必需的属性 "答案"；$.分数：7 大于最大值 5'
    page.screenshot(path=shots / "said-schema-violation-zh.png", full_page=True)


def test_a_pattern_the_engine_refuses_is_said_in_chinese(page, live):
    page.goto(live.url + "/evaluators")
    page.click("table.presets a:has-text('正则匹配')")
    page.click("#use-preset")
    page.locator("#cfg-pattern").wait_for()
    page.fill("#cfg-pattern", r"\p{Foo}")  # JavaScript without the u flag takes it; assay's engine does not
    page.fill(".test-inputs [name=output]", "x")
    page.click("#run-test")
    alert = page.locator(".test-panel .alert.error")
    alert.wait_for()
    assert alert.inner_text() == "config.params.pattern：正则表达式无效：位置 7 处 未知的 Unicode 属性"
