"""The code editor behaves as an IDE (issue 22): the language's indentation, Tab and Shift-Tab,
Escape then Tab to leave, no stray closing bracket when typing line by line, the starter
templates passing their own test, long lines scrolling inside the editor, and the test result
in view on a 1366x768 screen."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.browser

CODE = "#code .cm-content"


def code_of(page) -> str:
    """The editor's lines as drawn (a short document is drawn whole), joined by newlines."""
    return page.evaluate("Array.from(document.querySelectorAll('#code .cm-line'), (l) => l.textContent).join('\\n')")


def new_editor(page, live, language: str = "python") -> None:
    page.goto(live.url + "/evaluators/new")
    page.locator(CODE).wait_for()
    if language != "python":
        page.select_option("#language", language)


def clear_code(page) -> None:
    page.click(CODE)
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")


def run_test(page) -> str:
    page.click("#run-test")
    verdict = page.locator("#verdict")
    verdict.wait_for()
    return verdict.get_attribute("class") or ""


@pytest.mark.parametrize("language", ["python", "nodejs"])
def test_the_starter_template_passes_its_own_test(page, live, language):
    new_editor(page, live, language)
    assert "passed" in run_test(page)


def test_enter_after_a_python_def_indents_four_spaces_and_the_test_still_passes(page, live):
    """The reported bug: Enter after ``def evaluate(...):`` indented 2 spaces, the template uses
    4, and the test answered "unexpected indent"."""
    new_editor(page, live)
    page.click(f"{CODE} .cm-line:has-text('def evaluate')")
    page.keyboard.press("End")
    page.keyboard.press("Enter")
    page.keyboard.type("length = len(output)")
    assert "\n    length = len(output)\n    return" in code_of(page)
    assert "passed" in run_test(page)


def test_tab_and_shift_tab_indent_and_escape_then_tab_leaves(page, live):
    new_editor(page, live)
    page.click(f"{CODE} .cm-line:has-text('return')")
    page.keyboard.press("Home")
    page.keyboard.press("Tab")
    assert "\n        return" in code_of(page)
    assert page.evaluate("document.activeElement.classList.contains('cm-content')")
    page.keyboard.press("Shift+Tab")
    assert "\n    return" in code_of(page) and "\n        return" not in code_of(page)
    page.keyboard.press("Escape")
    page.keyboard.press("Tab")
    assert not page.evaluate("document.activeElement.closest('.cm-editor')")


def test_typing_a_javascript_function_line_by_line_leaves_no_stray_bracket(page, live):
    """The reported bug: auto-closed ``{`` plus the ``}`` typed on its own line made two."""
    new_editor(page, live, "nodejs")
    clear_code(page)
    for line in ("module.exports = function evaluate(input, output) {", "if (output.length > 0) {",
                 "return { passed: true, score: 1 };", "}", "return { passed: false, reason: 'empty' };", "}"):
        page.keyboard.type(line)
        page.keyboard.press("Enter")
    code = code_of(page)
    assert code.count("{") == code.count("}") == 4, code
    assert code.rstrip().endswith("  return { passed: false, reason: 'empty' };\n}"), code
    page.fill(".test-inputs [name=output]", "有输出")
    assert "passed" in run_test(page)


def test_a_closing_bracket_that_is_needed_is_still_typed(page, live):
    new_editor(page, live, "nodejs")
    clear_code(page)
    page.keyboard.insert_text("module.exports = function evaluate() {\n  if (true) {\n    return { passed: true };\n\n}")
    page.keyboard.press("ArrowUp")  # onto the blank line inside the unclosed `if`
    page.keyboard.type("}")
    code = code_of(page)
    assert code.count("{") == code.count("}") == 3, code


def test_long_lines_scroll_inside_the_editor_and_the_result_shows_on_a_laptop_screen(page, live, shots):
    page.set_viewport_size({"width": 1366, "height": 768})
    new_editor(page, live)
    page.click(f"{CODE} .cm-line:has-text('return')")
    page.keyboard.press("End")
    page.keyboard.type("  # " + "很长的注释 long comment " * 20)
    assert page.evaluate("document.documentElement.scrollWidth <= document.documentElement.clientWidth")
    assert page.evaluate("(() => { const s = document.querySelector('#code .cm-scroller');"
                         " return s.scrollWidth > s.clientWidth; })()")
    page.evaluate("window.scrollTo(0, 0)")
    assert "passed" in run_test(page)
    box = page.locator("#result-reason").bounding_box()
    assert page.evaluate("window.scrollY") == 0 and box is not None and box["y"] + box["height"] <= 768, box
    page.screenshot(path=shots / "editor-1366x768.png")


def test_the_editors_own_words_are_in_the_pages_language(page, live):
    """CodeMirror's fold markers and search panel said "Fold line", "Find", "replace all" in the
    Chinese pages: its phrases come from the catalogue."""
    new_editor(page, live)
    titles = page.eval_on_selector_all("#code .cm-foldGutter span[title]", "spans => spans.map((s) => s.title)")
    assert "折叠" in titles and set(titles) <= {"折叠", "展开"}, titles  # foldable lines; the gutter's spacer
    page.click(f"{CODE} .cm-line:has-text('return')")
    page.keyboard.press("Control+F")
    panel = page.locator("#code .cm-search")
    panel.wait_for()
    assert panel.locator("input[name=search]").get_attribute("placeholder") == "查找"
    assert "全部替换" in panel.inner_text() and "replace" not in panel.inner_text().lower()
