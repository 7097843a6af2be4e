"""The evaluator pages in a real browser: sign-in, the list and its tabs, writing a Python
evaluator in the editor and testing it (a broken line is highlighted), saving with Ctrl-S,
deleting with a confirmation, and switching the language."""

from __future__ import annotations

import re

import pytest
from pages_support import sign_in

pytestmark = pytest.mark.browser

BROKEN = ("def evaluate(input, output, expected, metadata):\n"
          "    ratio = len(output) / len(expected)\n"
          "    return {'passed': ratio > 0.5, 'score': 1 / 0}\n")
FIXED = ("def evaluate(input, output, expected, metadata):\n"
         "    same = output.strip() == (expected or '').strip()\n"
         "    return {'passed': same, 'score': 1.0 if same else 0.0, 'reason': 'checked'}\n")


def replace_code(page, code: str) -> None:
    page.click("#code .cm-content")
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    page.keyboard.insert_text(code)


def test_sign_in_refuses_a_bad_token_and_keeps_the_way_back(browser, live, shots):
    context = browser.new_context(locale="zh-CN")
    page = context.new_page()
    page.goto(live.url + "/evaluators?tab=custom")
    assert "/signin" in page.url
    sign_in(page, live, token="assay_not-a-token")
    assert page.locator(".alert.error").inner_text() == "令牌无效或已被吊销。"
    page.screenshot(path=shots / "signin-error.png")
    page.fill("#token", live.token)
    page.click("button[type=submit]")
    page.wait_for_url("**/evaluators")
    cookie = next(c for c in context.cookies() if c["name"] == "assay_session")
    assert cookie["httpOnly"] and cookie["sameSite"] == "Lax"
    page.click("button.link:has-text('退出登录')")
    page.wait_for_url("**/signin")
    page.goto(live.url + "/evaluators")
    assert "/signin" in page.url
    context.close()


def test_the_list_has_its_tabs_in_the_url_and_an_empty_state(page, live, shots):
    page.goto(live.url + "/evaluators")
    rows = page.locator("table.presets tbody tr")
    rows.first.wait_for()
    assert rows.count() == 5
    assert page.locator("table.presets").inner_text().count("精确匹配") == 1
    page.screenshot(path=shots / "evaluators-presets.png", full_page=True)
    page.click("[data-tab=custom]")
    page.wait_for_url(re.compile(r"tab=custom"))
    page.select_option("#type-filter", "llm")
    page.wait_for_url(re.compile(r"type=llm"))
    page.fill("#search", "没有这个名字")
    page.wait_for_url(re.compile(r"q=%"))
    page.locator(".state.empty").wait_for()
    assert page.locator(".state.empty").inner_text().startswith("没有符合条件的评估器")
    page.reload()
    assert page.locator(".tab.active").inner_text() == "自定义评估器"
    assert page.locator("#type-filter").input_value() == "llm"
    assert page.locator("#search").input_value() == "没有这个名字"
    page.go_back()
    page.wait_for_url(re.compile(r"tab=custom$"))
    page.go_back()
    page.locator("table.presets").wait_for()


def test_write_test_break_fix_save_and_delete_a_python_evaluator(page, live, shots):
    page.goto(live.url + "/evaluators/new")
    page.locator("#code .cm-content").wait_for()
    assert "def evaluate(input, output, expected, metadata):" in page.locator("#code .cm-content").inner_text()
    assert page.locator("#code .cm-lineNumbers").count() == 1
    page.fill("#name", "长度检查")
    page.fill(".test-inputs [name=input]", "北京是哪个国家的首都？")
    page.fill(".test-inputs [name=output]", "中国")
    page.fill(".test-inputs [name=expected]", "中国")
    page.click("#run-test")
    page.locator("#verdict.passed").wait_for()
    assert page.locator("#result-score").inner_text() == "1.000"

    replace_code(page, BROKEN)
    page.click("#run-test")
    page.locator("#verdict.errored").wait_for()
    assert "ZeroDivisionError" in page.locator("#result-reason").inner_text()
    assert "第 3 行" in page.locator("#result-error").inner_text()
    highlighted = page.locator("#code .cm-error-line")
    assert highlighted.count() == 1 and "1 / 0" in highlighted.inner_text()
    page.screenshot(path=shots / "editor-runtime-error.png", full_page=True)

    replace_code(page, FIXED.replace("same = ", "same = ("))  # an unclosed bracket: a syntax error on line 2
    page.keyboard.press("Control+S")
    page.locator(".save-alert .alert.error").wait_for()
    assert "第 2 行" in page.locator(".save-alert").inner_text()  # said in Chinese
    assert "same = (" in page.locator("#code .cm-error-line").inner_text()
    assert "/evaluators/new" in page.url

    replace_code(page, FIXED)
    assert page.locator("#dirty").is_visible()
    page.keyboard.press("Control+S")
    page.wait_for_url(re.compile(r"/evaluators/[0-9a-f-]{36}$"))
    page.locator("#dirty").wait_for(state="hidden")
    page.click("#run-test")
    page.locator("#result-reason:has-text('checked')").wait_for()
    page.screenshot(path=shots / "editor-saved.png", full_page=True)

    page.reload()
    assert "'reason': 'checked'" in page.locator("#code .cm-content").inner_text()
    page.fill("#description", "changed")
    warnings = []

    def stay(dialog) -> None:  # the unsaved-change warning: answer "stay"
        warnings.append(dialog.message)
        dialog.dismiss()

    page.on("dialog", stay)
    page.click("#back")
    assert warnings == ["有未保存的修改，确定离开吗？"] and re.search(r"/evaluators/[0-9a-f-]{36}$", page.url)
    page.remove_listener("dialog", stay)
    page.keyboard.press("Control+S")
    page.locator("#dirty").wait_for(state="hidden")

    page.goto(live.url + "/evaluators?tab=custom")
    row = page.locator("table.custom tbody tr", has_text="长度检查")
    row.wait_for()
    assert row.locator("td").nth(2).inner_text() == "Python" and row.locator("td").nth(3).inner_text() == "alice"
    widths = page.eval_on_selector_all("table.custom col", "cols => cols.map(c => c.style.width)")
    assert widths == ["", "100px", "100px", "120px", "180px", "120px"]  # the name's column takes the rest
    name_width = page.eval_on_selector("table.custom td.name", "td => td.getBoundingClientRect().width")
    assert name_width > 180
    page.screenshot(path=shots / "evaluators-custom.png", full_page=True)
    row.locator("button:has-text('删除')").click()
    page.locator("dialog.confirm").wait_for()
    page.screenshot(path=shots / "evaluators-delete-confirm.png")
    page.click("dialog.confirm button[value=cancel]")
    assert row.count() == 1
    row.locator("button:has-text('删除')").click()
    page.click("dialog.confirm button[value=ok]")
    row.wait_for(state="detached")
    with live.api() as api:
        assert all(e["name"] != "长度检查" for e in api.get("/evaluators").json()["data"])


def test_a_preset_opens_read_only_with_its_config_form(page, live, shots):
    page.goto(live.url + "/evaluators")
    page.click("table.presets a:has-text('相似度')")
    page.locator(".schema-form.readonly").wait_for()
    assert page.locator("#cfg-threshold").input_value() == "0.8"
    assert page.locator("#cfg-algorithm").is_disabled()
    assert page.locator("#save").count() == 0
    page.screenshot(path=shots / "editor-preset.png", full_page=True)


def test_the_language_switch_is_remembered(browser, live, shots):
    context = browser.new_context(locale="zh-CN")
    page = context.new_page()
    sign_in(page, live)
    page.wait_for_url("**/evaluators")
    assert page.locator(".tab.active").inner_text() == "预置评估器"
    page.select_option("#lang-switch", "en")
    page.wait_for_load_state()
    page.locator(".tab.active:has-text('Preset evaluators')").wait_for()
    assert page.locator("table.presets").inner_text().count("Exact match") == 1
    page.goto(live.url + "/evaluators/new")
    assert "# Return:" in page.locator("#code .cm-content").inner_text()
    page.screenshot(path=shots / "editor-new-en.png", full_page=True)
    context.close()
