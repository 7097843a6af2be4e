"""Evaluators of every kind in forms, in a real browser (issue 22): "use this preset" with your
own regex (live match preview), JSON Schema (a JSON editor that refuses bad JSON before
saving), similarity parameters; an LLM form with labelled fields that requires what the server
requires and never offers rubric_file; a composite picking existing evaluators with weights.
Every form names the field that is wrong before anything is sent."""

from __future__ import annotations

import re
import uuid

import pytest

pytestmark = pytest.mark.browser

SAVED = re.compile(r"/evaluators/[0-9a-f-]{36}$")


def stored(live, page) -> dict:
    with live.api() as api:
        return api.get("/evaluators/" + page.url.rsplit("/", 1)[1]).json()["data"]


def problems(page) -> str:
    page.locator("#form-problems").wait_for()
    return page.locator("#form-problems").inner_text()


def new_of_type(page, live, kind: str, name: str) -> None:
    page.goto(live.url + "/evaluators/new")
    page.locator("#code .cm-content").wait_for()
    page.select_option("#type", kind)
    page.fill("#name", name)


def test_a_regex_evaluator_made_from_the_preset_with_a_live_preview(page, live, shots):
    page.goto(live.url + "/evaluators")
    page.click("table.presets a:has-text('正则匹配')")
    page.click("#use-preset")
    page.wait_for_url(re.compile(r"/evaluators/new\?preset="))
    page.locator("#cfg-pattern").wait_for()
    assert page.locator("#cfg-presetType").input_value() == "regex"
    assert page.locator("#name").input_value() == "我的正则匹配"
    page.fill(".test-inputs [name=output]", "订单号：AB-1234，已发货")
    page.fill("#cfg-pattern", "(")
    page.locator("#regex-preview:has-text('正则表达式无效')").wait_for()
    page.keyboard.press("Control+S")
    assert "正则表达式：正则表达式无效" in problems(page)
    assert "/evaluators/new" in page.url
    page.fill("#cfg-pattern", r"[A-Z]{2}-\d{4}")
    page.locator("#regex-verdict:has-text('匹配')").wait_for()
    assert page.locator("#regex-preview mark").inner_text() == "AB-1234"
    page.fill(".test-inputs [name=output]", "没有订单号")
    page.locator("#regex-verdict:has-text('没有匹配')").wait_for()
    page.fill(".test-inputs [name=output]", "订单号：AB-1234，已发货")
    page.screenshot(path=shots / "editor-regex-preset.png", full_page=True)
    page.keyboard.press("Control+S")
    page.wait_for_url(SAVED)
    evaluator = stored(live, page)
    assert evaluator["type"] == "preset" and not evaluator["isPreset"]
    assert evaluator["config"] == {"presetType": "regex", "params": {  # as validated: every field
        "pattern": r"[A-Z]{2}-\d{4}", "flags": "", "timeout_ms": 100, "must_match": [], "must_not_match": []}}
    page.click("#run-test")
    page.locator("#verdict.passed").wait_for()


def test_a_json_schema_is_edited_as_json_and_checked_before_saving(page, live):
    new_of_type(page, live, "preset", f"schema {uuid.uuid4().hex[:6]}")
    page.select_option("#cfg-presetType", "json_schema")
    editor = page.locator("#cfg-schema .cm-content")
    editor.click()
    page.keyboard.press("Control+A")
    page.keyboard.insert_text('{"type": "object", "required": ["answer"],}')
    page.locator("#cfg-schema .cm-lint-marker-error, #cfg-schema .cm-lintRange-error").first.wait_for()
    page.keyboard.press("Control+S")
    said = problems(page)
    assert "JSON Schema：不是合法的 JSON：第 1 行第 43 列附近有错误" in said  # where, in Chinese
    assert not re.search(r"[A-Za-z]{4,}", said.replace("JSON Schema", "").replace("JSON", ""))  # no browser English
    editor.click()
    page.keyboard.press("Control+A")
    page.keyboard.insert_text('{"type": "object", "required": ["answer"]}')
    page.keyboard.press("Control+S")
    page.wait_for_url(SAVED)
    assert stored(live, page)["config"]["params"]["schema"]["required"] == ["answer"]
    page.fill(".test-inputs [name=output]", '{"answer": 42}')
    page.click("#run-test")
    page.locator("#verdict.passed").wait_for()


def test_similarity_parameters_are_validated_with_the_field_named(page, live):
    new_of_type(page, live, "preset", f"similar {uuid.uuid4().hex[:6]}")
    page.select_option("#cfg-presetType", "similarity")
    page.select_option("#cfg-algorithm", "cosine")
    page.fill("#cfg-threshold", "1.5")
    page.keyboard.press("Control+S")
    assert "阈值：必须在 0 到 1 之间。" in problems(page)
    assert page.locator("#cfg-threshold").get_attribute("aria-invalid") == "true"
    page.fill("#cfg-threshold", "0.6")
    page.keyboard.press("Control+S")
    page.wait_for_url(SAVED)
    params = stored(live, page)["config"]["params"]
    assert params["algorithm"] == "cosine" and params["threshold"] == 0.6


def test_the_llm_form_has_labelled_fields_and_requires_a_model_and_rubric(page, live, shots):
    new_of_type(page, live, "llm", f"judge {uuid.uuid4().hex[:6]}")
    page.locator("#cfg-rubric").wait_for()
    labels = page.locator(".llm-form > .schema-form label").all_inner_texts()
    assert labels == ["模型", "评分标准", "评分刻度", "阈值"]
    assert page.locator("#cfg-rubric_file").count() == 0 and page.locator("#cfg-base_url").count() == 0
    page.keyboard.press("Control+S")
    text = problems(page)
    assert "模型：必填。" in text and "评分标准：必填。" in text
    page.screenshot(path=shots / "editor-llm.png", full_page=True)
    page.fill("#cfg-model", "qwen-plus")
    page.fill("#cfg-rubric", "回答是否准确、礼貌")
    page.select_option("#cfg-scale", "1-10")
    page.keyboard.press("Control+S")
    page.wait_for_url(SAVED)
    config = stored(live, page)["config"]
    assert (config["model"], config["rubric"], config["scale"]) == ("qwen-plus", "回答是否准确、礼貌", "1-10")
    assert config["rubric_file"] is None  # stored as validated: the default, no file read


def test_a_composite_picks_existing_evaluators_with_weights(page, live, shots):
    new_of_type(page, live, "composite", f"combined {uuid.uuid4().hex[:6]}")
    page.keyboard.press("Control+S")
    assert "请至少选择一个评估器。" in problems(page)
    page.fill("#composite-picker-search", "精确")
    page.locator("#composite-picker-results button:has-text('精确匹配')").click()
    page.fill("#composite-picker-search", "包含")
    page.locator("#composite-picker-results button:has-text('包含匹配')").click()
    page.locator("#picked .picked-row").nth(1).wait_for()
    page.locator("#picked input.weight").nth(1).fill("3")
    page.select_option("#cfg-rule", "weighted")
    page.fill("#cfg-threshold", "0.7")
    page.screenshot(path=shots / "editor-composite.png", full_page=True)
    page.keyboard.press("Control+S")
    page.wait_for_url(SAVED)
    config = stored(live, page)["config"]
    assert [(g["type"], g["weight"]) for g in config["graders"]] == [("exact_match", 1), ("contains", 3)]
    assert (config["rule"], config["threshold"]) == ("weighted", 0.7)
    page.fill(".test-inputs [name=output]", "上海")
    page.fill(".test-inputs [name=expected]", "北京")
    page.click("#run-test")
    page.locator("#verdict.failed").wait_for()
