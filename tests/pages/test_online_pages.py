"""The online pages in Chromium, as a user works them: traffic arrives over OTLP; on /online/new
the new rule's filter is checked as it is typed (its mistake's position said at the field) and
the recent spans it takes are counted and a few listed; the rule is made; spans sent after it
are graded as they arrive, and its dashboard draws the pass rate per hour by model with
intervals and lists the verdicts, filtered. The pages fit a phone and pass axe, in Chinese and
in English."""

from __future__ import annotations

import re
import sys
import time
from pathlib import Path

import httpx2 as httpx
import pytest
from pages_support import policy_violations, serious_violations, wait_until

sys.path.insert(0, str(Path(__file__).parents[1] / "online"))
from otlp_build import chat_attributes, new_trace_id, request, span  # noqa: E402

pytestmark = pytest.mark.browser


def _traffic(live, start_ns: int, count: int = 12, step_ns: int = 1) -> None:
    spans = [span(new_trace_id(), (i + 1).to_bytes(8, "big"), f"chat {i}",
                  chat_attributes("Capital of France?", "Paris" if i % 3 else "Lyon",
                                  model="gpt-4o" if i % 2 else "gpt-4o-mini"), start_ns=start_ns + i * step_ns)
             for i in range(count)]
    answer = httpx.post(live.url + "/v1/traces", content=request(*spans).SerializeToString(), timeout=30,
                        headers={"Authorization": f"Bearer {live.token}", "Content-Type": "application/x-protobuf"})
    assert answer.status_code == 200, answer.text


def _an_hour_ago() -> int:
    return time.time_ns() - 3600 * 10**9  # inside the dashboard's last day


def test_a_rule_made_on_the_page_grades_arriving_spans_and_shows_its_numbers(page, live, shots):
    problems = policy_violations(page)
    with live.api() as api:
        made = api.post("/evaluators", json={"name": "提到巴黎", "type": "preset", "config": {
            "presetType": "regex", "params": {"pattern": "Paris"}}})
        assert made.status_code == 200, made.text
    _traffic(live, _an_hour_ago())  # what the filter's preview lists: spans that came before the rule
    page.goto(live.url + "/online")
    page.click("#new-rule")
    page.wait_for_url("**/online/new")
    wait_until(page, "document.querySelector('#rule-form') !== null")
    page.fill("#rule-name", "回答提到巴黎")
    page.fill("#filter", "gen_ai.request.model ==")
    wait_until(page, "!document.querySelector('#filter-error').hidden")
    assert "24" in page.text_content("#filter-error")  # the position of the mistake, in either language
    page.click("#save-rule")  # refused in the page: the filter's problem is listed with the others
    wait_until(page, "document.querySelector('#form-problems') !== null")
    assert "24" in page.text_content("#form-problems")
    page.fill("#filter", 'gen_ai.request.model startswith "gpt-4o"')
    wait_until(page, "document.querySelector('#filter-error').hidden"
                     " && document.querySelectorAll('#filter-preview li').length > 0")
    with live.api() as api:  # what the page says is what the API counts
        check = api.post("/online-rules/filter-check", json={"filter": 'gen_ai.request.model startswith "gpt-4o"',
                                                             "preview": True}).json()["data"]
    taken = len(check["matches"])
    assert taken >= 12 and str(taken) in page.text_content("#filter-status")
    assert str(check["scanned"]) in page.text_content("#filter-status")
    assert len(page.query_selector_all("#filter-preview li a")) == 5  # a few of them, then "and N more"
    assert str(taken - 5) in page.text_content("#filter-preview-more")
    page.fill("#evaluator-picker-search", "提到巴黎")
    wait_until(page, "document.querySelectorAll('#evaluator-picker-results button.pick').length === 1")
    page.click("#evaluator-picker-results button.pick")
    page.fill("#weight-0", "2")
    page.click("#save-rule")
    page.wait_for_url(re.compile(r"/online/[0-9a-f-]{36}$"))
    rule_id = page.url.rsplit("/", 1)[1]
    with live.api() as api:
        rule = api.get(f"/online-rules/{rule_id}").json()["data"]
        assert (rule["name"], rule["scope"], rule["sampleRate"], rule["evaluators"][0]["weight"]) == \
            ("回答提到巴黎", "span", 1.0, 2.0)
    # spans arriving now, over OTLP (started over the last three hours): the rule grades them as they come
    _traffic(live, time.time_ns() - 3 * 3600 * 10**9, step_ns=15 * 60 * 10**9)
    with live.api() as api:  # no backfill: the rule grades what arrives after it
        deadline = time.monotonic() + 60
        while len(api.get(f"/online-rules/{rule_id}/results").json()["data"]["results"]) < 12:
            assert time.monotonic() < deadline
            time.sleep(0.2)
    page.reload()
    wait_until(page, "document.querySelectorAll('#results tbody tr').length === 12")
    # the numbers load on their own, beside the results: either may be drawn first
    wait_until(page, "document.querySelectorAll('figure.chart-card').length === 2")
    charts = page.query_selector_all("figure.chart-card")
    assert sorted(c.get_attribute("data-value") for c in charts) == ["gpt-4o", "gpt-4o-mini"]
    assert page.query_selector_all("figure.chart-card svg .ci")  # intervals drawn, as bars and as a band
    assert len(page.query_selector_all("figure.chart-card svg .band")) == 2
    page.screenshot(path=shots / "online-dashboard.png", full_page=True)
    page.select_option("#window", "week")  # by the day: at most two days here, one or two points a model
    wait_until(page, "document.querySelectorAll('figure.chart-card svg').length === 2"
                     " && document.querySelector('#numbers .hint').textContent.includes('天')")
    page.select_option("#verdict", "failed")
    wait_until(page, "document.querySelectorAll('#results tbody tr').length === 4")
    assert not problems, problems


@pytest.mark.parametrize("locale", ["zh-CN", "en-US"])
def test_the_online_pages_fit_a_phone_and_pass_axe(browser, live, locale):
    with live.api() as api:
        evaluator = api.post("/evaluators", json={"name": "axe check", "type": "preset", "config": {
            "presetType": "regex", "params": {"pattern": "Paris"}}}).json()["data"]["id"]
        rule = api.post("/online-rules", json={"name": "每个回答 " + "x" * 80, "filter": "",
                                               "evaluators": [{"evaluatorId": evaluator}]}).json()["data"]
    _traffic(live, _an_hour_ago())
    context = browser.new_context(locale=locale, viewport={"width": 375, "height": 812})
    tab = context.new_page()
    try:
        tab.goto(live.url + "/signin")
        tab.fill("#token", live.token)
        tab.click("button[type=submit]")
        tab.wait_for_url("**/evaluators")
        found = []
        for path in ("/online", f"/online/{rule['id']}", "/online/new", f"/online/{rule['id']}/edit"):
            tab.goto(live.url + path)
            wait_until(tab, "document.querySelector('main') && !document.querySelector('.state.loading')")
            tab.wait_for_timeout(300)
            overflow = tab.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth")
            if overflow > 0:
                found.append(f"{path}: {overflow}px of horizontal scroll")
            found += [f"{path}: {v}" for v in serious_violations(tab)]
        assert not found, found
    finally:
        context.close()


def test_traces_are_searched_and_a_trace_shows_its_verdicts(page, live):
    with live.api() as api:
        evaluator = api.post("/evaluators", json={"name": "巴黎检查", "type": "preset", "config": {
            "presetType": "regex", "params": {"pattern": "Paris"}}}).json()["data"]["id"]
        rule = api.post("/online-rules", json={"name": "链路检查", "filter": 'gen_ai.operation.name == "chat"',
                                               "evaluators": [{"evaluatorId": evaluator}]}).json()["data"]
        whole = api.post("/online-rules", json={"name": "整条链路", "scope": "trace", "quietS": 0,
                                                "filter": 'span.name startswith "invoke_agent 商"',
                                                "evaluators": [{"evaluatorId": evaluator}]}).json()["data"]
    trace, root = new_trace_id(), b"\x61" * 8
    spans = [span(trace, root, "invoke_agent 商店", {"gen_ai.operation.name": "invoke_agent",
                                                   "app.note": "很长的备注" + "x" * 400}),
             span(trace, b"\x62" * 8, "chat gpt-4o", chat_attributes("q", "Paris"), parent=root)]
    answer = httpx.post(live.url + "/v1/traces", content=request(*spans).SerializeToString(), timeout=30,
                        headers={"Authorization": f"Bearer {live.token}", "Content-Type": "application/x-protobuf"})
    assert answer.status_code == 200
    with live.api() as api:
        deadline = time.monotonic() + 30
        for graded in (rule, whole):
            while not api.get(f"/online-rules/{graded['id']}/results").json()["data"]["results"]:
                assert time.monotonic() < deadline
                time.sleep(0.2)
        assert api.patch(f"/online-rules/{whole['id']}", json={"enabled": False}).status_code == 200
    problems = policy_violations(page)
    page.goto(live.url + "/online")
    page.click("#to-traces")
    page.wait_for_url("**/traces")
    page.fill("#trace-filter", 'span.name startswith "invoke_agent 商"')
    page.select_option("#trace-verdict", "passed")
    page.click("#trace-search button[type=submit]")
    wait_until(page, "document.querySelectorAll('#traces tbody tr').length === 1")
    assert "verdict=passed" in page.url
    page.click(f"#traces tbody tr[data-id='{trace.hex()}'] a")
    page.wait_for_url(f"**/traces/{trace.hex()}")
    wait_until(page, "document.querySelectorAll('#spans tbody tr').length === 2")
    chat = page.query_selector(f"#spans tbody tr[data-id='{'62' * 8}']")
    assert chat.get_attribute("data-depth") == "1" and chat.query_selector(".badge.status-passed")
    said = chat.query_selector(f"li[data-rule='{rule['id']}']")  # each verdict names the rule that gave it
    assert said and "链路检查" in said.inner_text() and "巴黎检查" in said.inner_text()
    top = page.query_selector(f"#spans tbody tr[data-id='{'61' * 8}'] li[data-rule='{whole['id']}']")
    assert top and top.get_attribute("data-scope") == "trace" and "每条 trace" in top.inner_text()
    chat.query_selector(".span-attributes summary").click()  # its attributes, the messages among them
    assert "gen_ai.output.messages" in chat.query_selector(".span-attributes").inner_text()
    page.goto(live.url + "/traces?filter=" + "a%20%3D%3D")
    wait_until(page, "document.querySelector('#filter-problem') !== null")
    assert "第 5 个字符处" in page.inner_text("#filter-problem")  # the validator's words, in the page's language
    page.set_viewport_size({"width": 375, "height": 812})
    for path in ("/traces", f"/traces/{trace.hex()}"):
        page.goto(live.url + path)
        wait_until(page, "document.querySelector('main') && !document.querySelector('.state.loading')")
        for folded in page.query_selector_all(".span-attributes summary"):
            folded.click()  # a long value wraps inside a phone's width
        page.wait_for_timeout(300)
        assert page.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth") <= 0
        assert serious_violations(page) == []
    assert not problems, problems


def test_a_rule_is_turned_off_and_deleted_on_its_page(page, live):
    with live.api() as api:
        evaluator = api.post("/evaluators", json={"name": "开关检查", "type": "preset", "config": {
            "presetType": "regex", "params": {"pattern": "Paris"}}}).json()["data"]["id"]
        rule = api.post("/online-rules", json={"name": "将被删除", "evaluators": [{"evaluatorId": evaluator}]}
                        ).json()["data"]
    page.goto(live.url + f"/online/{rule['id']}")
    wait_until(page, "document.querySelector('#rule-enabled') !== null")
    page.uncheck("#rule-enabled")
    with live.api() as api:
        deadline = time.monotonic() + 10
        while api.get(f"/online-rules/{rule['id']}").json()["data"]["enabled"]:
            assert time.monotonic() < deadline
            time.sleep(0.1)
    page.click("#delete-rule")
    page.click("dialog.confirm button[value=ok]")
    page.wait_for_url("**/online")
    with live.api() as api:
        assert api.get(f"/online-rules/{rule['id']}").status_code == 404


def test_a_rule_grades_stored_spans_from_its_page_once_and_only_while_on(page, live):
    """The page speaks Chinese: its toast says how many of the window's stored spans it will grade."""
    two_days_ago = time.time_ns() - 2 * 86400 * 10**9
    spans = [span(new_trace_id(), (100 + i).to_bytes(8, "big"), "chat", chat_attributes(
        "Capital of France?", "Paris" if i % 2 else "Lyon", model="backfill-model"), start_ns=two_days_ago + i)
        for i in range(6)]
    with live.api() as api:
        evaluator = api.post("/evaluators", json={"name": "回填检查", "type": "preset", "config": {
            "presetType": "regex", "params": {"pattern": "Paris"}}}).json()["data"]["id"]
        fields = {"filter": 'gen_ai.request.model == "backfill-model"', "evaluators": [{"evaluatorId": evaluator}]}
        # A rule that exists when the spans arrive grades them as they are planned; once it has,
        # they are past planning, and a rule made now sees them only by a backfill.
        arrived = api.post("/online-rules", json={"name": "到达时", **fields}).json()["data"]["id"]
    answer = httpx.post(live.url + "/v1/traces", content=request(*spans).SerializeToString(), timeout=30,
                        headers={"Authorization": f"Bearer {live.token}", "Content-Type": "application/x-protobuf"})
    assert answer.status_code == 200, answer.text
    with live.api() as api:
        _graded(api, arrived, 6)
        assert api.delete(f"/online-rules/{arrived}").status_code == 200
        rule = api.post("/online-rules", json={"name": "回填", **fields}).json()["data"]
    page.goto(live.url + f"/online/{rule['id']}")
    wait_until(page, "document.querySelector('#backfill') !== null && !document.querySelector('#backfill').disabled")

    def backfilled(jobs: int) -> None:
        page.click("#backfill")
        wait_until(page, "document.querySelector('#toasts .toast') !== null")
        said = page.text_content("#toasts")
        assert f"其中 {jobs} 个待评估" in said, said
        page.evaluate("document.querySelector('#toasts').replaceChildren()")

    page.select_option("#backfill-window", "day")
    backfilled(0)  # the spans are two days old
    page.select_option("#backfill-window", "week")
    backfilled(6)
    with live.api() as api:
        _graded(api, rule["id"], 6)
    backfilled(0)  # again: what the rule graded is skipped
    page.uncheck("#rule-enabled")
    wait_until(page, "document.querySelector('#backfill').disabled"
                     " && !document.querySelector('#rule-enabled').disabled")
    with live.api() as api:
        results = api.get(f"/online-rules/{rule['id']}/results").json()["data"]["results"]
        assert sorted(r["status"] for r in results) == ["failed"] * 3 + ["passed"] * 3


def _graded(api, rule_id: str, count: int, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while len(api.get(f"/online-rules/{rule_id}/results").json()["data"]["results"]) < count:
        assert time.monotonic() < deadline, f"rule {rule_id}: fewer than {count} results after {timeout_s} s"
        time.sleep(0.2)
