"""An online rule changed in the pages (Chromium): its creator opens its form from the
dashboard, changes every field and saves; what the API then answers is what was typed. Another
user opens the same rule read-only under a banner naming its owner, is offered no save, toggle
or delete, and "Copy as mine" starts a new rule's form from it; the form refuses bad numbers at
their fields before anything is sent."""

from __future__ import annotations

import re

import pytest
from pages_support import Live, serious_violations, sign_in, wait_until

pytestmark = pytest.mark.browser
RULE_PAGE = re.compile(r"/online/[0-9a-f-]{36}$")


def _evaluator(api, name: str) -> str:
    made = api.post("/evaluators", json={"name": name, "type": "preset", "config": {
        "presetType": "regex", "params": {"pattern": "Paris"}}})
    assert made.status_code == 200, made.text
    return made.json()["data"]["id"]


def _settled(tab) -> None:
    wait_until(tab, "document.querySelector('main') && !document.querySelector('.state.loading')"
                    " && document.querySelector('#rule-form, #rule-evaluators') !== null")


def test_the_creator_changes_every_field_of_a_rule_in_its_form(page, live, shots):
    with live.api() as api:
        first, second = _evaluator(api, "表单一"), _evaluator(api, "表单二")
        rule = api.post("/online-rules", json={"name": "待修改的规则", "filter": "", "evaluators": [
            {"evaluatorId": first}]}).json()["data"]
    page.goto(f"{live.url}/online/{rule['id']}")
    _settled(page)
    assert "表单一" in page.inner_text("#rule-evaluators")
    page.click("#edit-rule")
    page.wait_for_url(f"**/online/{rule['id']}/edit")
    _settled(page)
    assert page.input_value("#rule-name") == "待修改的规则" and page.input_value("#rate") == "100"
    page.fill("#rule-name", "改过的规则")
    page.fill("#filter", 'gen_ai.operation.name == "chat" and gen_ai.request.model != "x"')
    page.select_option("#scope", "trace")
    page.fill("#quiet", "2.5")  # not a whole number: refused at its field, nothing sent
    page.fill("#budget", "-1")
    page.click("#save-rule")
    wait_until(page, "!document.querySelector('#quiet-error').hidden && !document.querySelector('#budget-error').hidden")
    assert page.url.endswith("/edit")
    page.fill("#quiet", "5")
    page.fill("#budget", "200")
    assert page.is_hidden("#quiet-error") and page.is_hidden("#budget-error")  # gone once changed
    page.fill("#rate", "25")
    page.fill("#evaluator-picker-search", "表单二")
    wait_until(page, "document.querySelectorAll('#evaluator-picker-results button.pick').length === 1")
    page.click("#evaluator-picker-results button.pick")
    page.fill("#weight-1", "3")
    page.screenshot(path=shots / "online-rule-form.png", full_page=True)
    page.click(f"#picked li[data-id='{first}'] button.remove")
    assert page.is_visible("#dirty")
    page.click("#save-rule")
    page.wait_for_url(f"**/online/{rule['id']}")
    with live.api() as api:
        saved = api.get(f"/online-rules/{rule['id']}").json()["data"]
    assert (saved["name"], saved["filter"], saved["scope"], saved["sampleRate"], saved["quietS"],
            saved["judgeBudgetPerDay"]) == ("改过的规则", 'gen_ai.operation.name == "chat" and gen_ai.request.model '
                                                     '!= "x"', "trace", 0.25, 5, 200)
    assert [(e["evaluatorId"], e["weight"]) for e in saved["evaluators"]] == [(second, 3.0)]
    _settled(page)
    assert "改过的规则" in page.inner_text("h1")


def test_another_users_rule_opens_read_only_under_its_owners_name(browser, live, shots):
    with live.api() as api:
        rule = api.post("/online-rules", json={"name": "alice 的规则", "filter": 'span.name == "chat"',
                                               "evaluators": [{"evaluatorId": _evaluator(api, "只读检查")}]}
                        ).json()["data"]
        made = api.post("/users", json={"name": "carol-online"})
        assert made.status_code == 200, made.text
        token = api.post(f"/users/{made.json()['data']['id']}/tokens", json={"label": "pages"}).json()["data"]["token"]
    context = browser.new_context(locale="en-US", viewport={"width": 375, "height": 812})
    context.set_default_timeout(20_000)
    tab = context.new_page()
    try:
        sign_in(tab, Live(live.url, token))
        tab.wait_for_url("**/evaluators")
        tab.goto(f"{live.url}/online/{rule['id']}")
        _settled(tab)
        assert "alice" in tab.inner_text("#owner-banner")
        assert tab.locator("#rule-enabled, #delete-rule, #edit-rule").count() == 0
        assert serious_violations(tab) == []
        tab.click("#view-rule")
        tab.wait_for_url(f"**/online/{rule['id']}/edit")
        _settled(tab)
        assert "alice" in tab.inner_text("#owner-banner") and tab.inner_text("#read-only") == "Read-only"
        assert tab.locator("#save-rule").count() == 0 and tab.locator("#rule-name").is_disabled()
        assert tab.evaluate("document.documentElement.scrollWidth - document.documentElement.clientWidth") <= 0
        tab.screenshot(path=shots / "online-rule-form-read-only-phone.png", full_page=True)
        assert serious_violations(tab) == []
        tab.click("#copy-as-mine")
        tab.wait_for_url("**/online/new?copy=*")
        _settled(tab)
        assert tab.input_value("#rule-name") == "alice 的规则 (copy)"
        assert tab.input_value("#filter") == 'span.name == "chat"'
        tab.click("#save-rule")
        tab.wait_for_url(RULE_PAGE)
        _settled(tab)
        assert tab.locator("#owner-banner").count() == 0 and tab.is_visible("#edit-rule")  # carol's own copy
    finally:
        context.close()
