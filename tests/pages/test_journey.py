"""A new user's whole journey in the browser alone (issue 22's "done when"), in Chinese on a
laptop and in English on a phone: sign in with the token, make a dataset and drop a JSONL file
on it (its rows appear in the preview), make a regex evaluator from the preset (the preview
marks the match as the pattern is typed), write a Python evaluator in the code editor (typed
line by line: Enter keeps Python's indentation, Shift-Tab dedents) and test it, build a task
with the two evaluators and a weight, start a run, and watch the run page until it finishes
with the pass rate this test computes from the rows it uploaded.

Everything is found by what the page shows (the catalogue's words for the page's language);
a screenshot of each step is saved under ``journey/``; no step may leave the page scrolling
sideways or with a serious or critical axe-core violation.
"""

from __future__ import annotations

import json
import re
import uuid

import pytest
from pages_support import serious_violations, sign_in

from assay.server.pages.i18n import catalogue

pytestmark = pytest.mark.browser

PATTERN = r"[A-Z]{2}-\d{4}"
MIN_LENGTH = 12
ROWS = [{"id": f"o{i:02d}", "input": f"订单 {i} 到哪了？",
         "output": (f"您的订单 AB-{1000 + i} 已发货。" if i % 3 else "已发货，请耐心等待几天，谢谢。") if i % 4
         else "已发货", "expected": "已发货"} for i in range(40)]
# 40 rows: two slices of a run (32 and 8), so that the run is seen under way.
PASSED = [r["id"] for r in ROWS if re.search(PATTERN, r["output"]) and len(r["output"]) >= MIN_LENGTH]


def words(lang: str):
    messages = catalogue(lang)
    return lambda key, **args: messages[key].format(**args)


def no_sideways_scroll(page, step: str) -> None:
    overflow = page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
    assert overflow <= 0, f"{step}: {overflow}px of horizontal scroll"


def code_of(page) -> str:
    return page.evaluate("Array.from(document.querySelectorAll('#code .cm-line'), (l) => l.textContent).join('\\n')")


@pytest.mark.parametrize("lang, width, height", [("zh", 1366, 768), ("en", 375, 812)])
def test_a_new_user_goes_from_a_file_to_a_finished_run(browser, live, shots, lang, width, height):
    t = words(lang)
    tag = uuid.uuid4().hex[:6]
    folder = shots / "journey"
    folder.mkdir(exist_ok=True)
    context = browser.new_context(locale="zh-CN" if lang == "zh" else "en-US",
                                  viewport={"width": width, "height": height})
    context.set_default_timeout(20_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))

    def step(name: str) -> None:
        no_sideways_scroll(page, name)
        assert serious_violations(page) == [], name  # axe-core, on the page as this step left it
        page.screenshot(path=folder / f"{lang}-{width}-{name}.png", full_page=True)

    try:
        sign_in(page, live)
        page.wait_for_url("**/evaluators")

        # 1. A dataset, and a JSONL file dropped on its upload box: the rows appear in the preview.
        page.get_by_role("link", name=t("nav.datasets"), exact=True).click()
        page.get_by_role("button", name=t("datasets.new")).click()
        page.get_by_label(t("datasets.name")).fill(f"订单问答 {tag}")
        page.get_by_role("button", name=t("datasets.create")).click()
        page.wait_for_url(re.compile(r"/datasets/[0-9a-f-]{36}$"))
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in ROWS)
        drop = page.evaluate_handle("text => { const dt = new DataTransfer();"
                                    " dt.items.add(new File([text], '订单.jsonl')); return dt; }", text)
        page.dispatch_event("#dropzone", "drop", {"dataTransfer": drop})
        page.get_by_role("heading", name=t("dataset.preview", number=1)).wait_for()
        preview = page.locator("#preview tbody tr")
        preview.nth(19).wait_for()
        assert preview.count() == 20 and t("dataset.uploaded", number=1, rows=40) in page.locator(".toast").inner_text()
        assert preview.nth(1).locator("td").all_inner_texts()[:4] == ["2", "o01", ROWS[1]["input"], ROWS[1]["output"]]
        step("1-dataset")

        # 2. A regex evaluator from the preset: the preview marks the match while the pattern is typed.
        page.get_by_role("link", name=t("nav.evaluators"), exact=True).click()
        page.get_by_role("link", name=t("preset.regex.name"), exact=True).click()
        page.get_by_role("link", name=t("editor.usePreset")).click()
        page.get_by_label(t("editor.name"), exact=True).fill(f"订单号 {tag}")
        page.get_by_role("heading", name=f"订单号 {tag}").wait_for()  # the heading follows the name
        page.locator("#regex-preview", has_text=t("preset.regex.previewNoOutput")).wait_for()  # says what to fill in
        page.get_by_label(f"output {t('editor.param.output')}").fill(ROWS[1]["output"])
        pattern = page.get_by_label(t("schema.regex.pattern"), exact=True)
        pattern.fill("")  # the preset's own pattern, replaced
        pattern.press_sequentially(PATTERN)
        page.locator("#regex-preview mark").wait_for()
        assert page.locator("#regex-preview mark").inner_text() == "AB-1001"
        page.get_by_label(f"output {t('editor.param.output')}").fill(ROWS[0]["output"])
        page.locator("#regex-verdict", has_text=t("preset.regex.noMatch")).wait_for()
        page.get_by_label(f"output {t('editor.param.output')}").fill(ROWS[1]["output"])
        page.locator("#regex-preview mark").wait_for()
        step("2-regex")
        page.get_by_role("button", name=t("editor.save"), exact=True).click()
        page.wait_for_url(re.compile(r"/evaluators/[0-9a-f-]{36}$"))
        page.get_by_role("button", name=t("editor.runTest")).click()
        page.locator("#verdict.passed").wait_for()

        # 3. A Python evaluator typed into the editor, tested on a short and a long answer.
        page.get_by_role("link", name=t("nav.evaluators"), exact=True).click()
        page.get_by_role("link", name=t("evaluators.create")).click()
        page.get_by_label(t("editor.name"), exact=True).fill(f"长度 {tag}")
        page.locator("#code .cm-line", has_text="def evaluate").click()
        page.keyboard.press("End")
        page.keyboard.press("Enter")
        page.keyboard.type("time.sleep(0.05)  # a slow check: the run is seen under way")
        page.keyboard.press("Enter")
        page.keyboard.type(f"if len(output) < {MIN_LENGTH}:")
        page.keyboard.press("Enter")
        page.keyboard.type("return {'passed': False, 'score': 0, 'reason': 'too short'}")
        page.keyboard.press("Enter")
        page.keyboard.press("Shift+Tab")
        page.keyboard.press("Control+Home")
        page.keyboard.type("import time")
        page.keyboard.press("Enter")
        assert (f"    time.sleep(0.05)  # a slow check: the run is seen under way\n    if len(output) < {MIN_LENGTH}:\n"
                "        return {'passed': False, 'score': 0, 'reason': 'too short'}\n") in code_of(page)
        page.get_by_label(f"output {t('editor.param.output')}").fill("已发货")
        page.get_by_role("button", name=t("editor.runTest")).click()
        page.locator("#verdict.failed").wait_for()
        assert page.locator("#result-reason").inner_text() == "too short"  # the code's own words, as written
        assert page.locator("#result-passed").inner_text() == t("common.no")
        page.get_by_label(f"output {t('editor.param.output')}").fill(ROWS[1]["output"])
        page.get_by_role("button", name=t("editor.runTest")).click()
        page.locator("#verdict.passed").wait_for()
        step("3-python")
        page.keyboard.press("Control+S")
        page.wait_for_url(re.compile(r"/evaluators/[0-9a-f-]{36}$"))

        # 4. A task: the dataset, from its page; the evaluators picked by searching, one weighing 3.
        page.get_by_role("link", name=t("nav.datasets"), exact=True).click()
        page.get_by_role("link", name=f"订单问答 {tag}").click()
        page.get_by_role("link", name=t("dataset.newTask")).click()
        page.wait_for_url("**/tasks/new?dataset=*")
        page.get_by_label(t("taskForm.name"), exact=True).fill(f"订单任务 {tag}")
        assert page.locator("#dataset-link").inner_text() == f"订单问答 {tag}"
        search = page.get_by_placeholder(t("form.pickSearch"))
        search.fill(f"订单号 {tag}")
        search.press("Enter")  # picks the first match, never submits the form
        page.locator("#picked li", has_text=f"订单号 {tag}").wait_for()
        search.fill(tag)
        page.get_by_role("button", name=f"+ 长度 {tag}").click()
        page.get_by_label(t("form.weightOf", name=f"长度 {tag}")).fill("3")
        step("4-task-form")
        page.get_by_role("button", name=t("editor.save"), exact=True).click()
        page.wait_for_url(re.compile(r"/tasks/[0-9a-f-]{36}$"))
        task_id = page.url.rsplit("/", 1)[1]
        page.get_by_role("button", name=t("task.startRun")).wait_for()
        assert f"订单号 {tag} ×1{t('common.listSep')}长度 {tag} ×3" in page.locator("main").inner_text()
        with live.api() as api:
            task = api.get(f"/tasks/{task_id}").json()["data"]
        assert [(e["name"], e["weight"]) for e in task["evaluators"]] == [(f"订单号 {tag}", 1), (f"长度 {tag}", 3)]

        # 5. A run, watched until it finishes: progress moves, then the figures of the rows uploaded.
        page.get_by_role("button", name=t("task.startRun")).click()
        page.wait_for_url(re.compile(r"/runs/[0-9a-f-]{36}$"))
        seen: list[str] = []
        while not page.locator("#run-status.run-completed").count():
            done = page.locator("#run-done")
            if done.count():
                seen.append(done.inner_text().split()[0])
            page.wait_for_timeout(100)
        partial = sorted({s for s in seen if s not in ("0/80", "80/80")})
        assert partial, f"the run was never seen under way: {seen}"
        assert page.locator("#run-done").inner_text().startswith("80/80")
        rate = f"{100 * len(PASSED) / len(ROWS):.1f}%"
        assert page.locator("#pass-rate").inner_text() == rate
        assert page.locator("#pass-rate").get_attribute("title") == page.locator("#pass-rate-definition").inner_text()
        assert t("dataset.versionLabel", number=1) in page.locator("#run-dataset").inner_text()
        assert t("run.datasetRows", rows=40) in page.locator("#run-dataset").inner_text()
        per_evaluator = [row.locator("td").all_inner_texts()[:3] for row in page.locator("#per-evaluator tbody tr").all()]
        matching = sum(bool(re.search(PATTERN, r["output"])) for r in ROWS)
        long_enough = sum(len(r["output"]) >= MIN_LENGTH for r in ROWS)
        assert per_evaluator == [[f"订单号 {tag}", str(matching), str(40 - matching)],
                                 [f"长度 {tag}", str(long_enough), str(40 - long_enough)]]
        graded = [row.locator("td").all_inner_texts() for row in page.locator("#graded-with tbody tr").all()]
        assert [(g[0], g[2]) for g in graded] == [(f"订单号 {tag}", "1"), (f"长度 {tag}", "3")]
        assert all(g[1].strip() == t("versions.label", number=1) for g in graded), graded  # the version that graded
        assert page.locator("#graded-with a.version-link").first.get_attribute("href").endswith("?version=1")
        took = re.escape(t("run.took", seconds="§")).replace("§", r"[\d.]+")
        page.locator("#run-times", has_text=re.compile(took)).wait_for()  # how long the run took
        assert page.locator("#back-to-task").inner_text() == f"← 订单任务 {tag}"
        step("5-run")
        assert errors == []
    finally:
        context.close()
