"""Reading what online evaluation stored, through the HTTP API on both databases: two models
and two windows of a rule compared unpaired, the filter check's preview of recent spans, and
traces searched and shown with their verdicts."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "online"))
from online_support import evaluator as _evaluator  # noqa: E402
from online_support import post as _post  # noqa: E402
from online_support import results as _results  # noqa: E402
from online_support import rule as _rule  # noqa: E402
from otlp_build import NOW_NS, chat_attributes, new_trace_id, request, span  # noqa: E402


def test_two_models_and_two_windows_compared_unpaired(api):
    from assay.core import stats

    rule = _rule(api, _evaluator(api))
    day = 86400 * 10**9
    spans = []
    for i in range(40):
        model = "gpt-4o" if i < 20 else "gpt-4o-mini"
        says = "Paris" if (i < 15 or 20 <= i < 25) else "Lyon"
        spans.append(span(new_trace_id(), (i + 1).to_bytes(8, "big"), "chat",
                          chat_attributes("q", says, model=model), start_ns=NOW_NS + (i % 2) * day))
    assert _post(api, request(*spans)).status_code == 200
    assert len(_results(api, rule["id"], 40)) == 40
    by_model = api.call("GET", f"/online-rules/{rule['id']}/compare", params={
        "split": "gen_ai.request.model", "base": "gpt-4o", "new": "gpt-4o-mini", "from": "2026-05-28T00:00:00Z",
        "to": "2026-06-01T00:00:00Z"}).json()["data"]
    overall = by_model["overall"]
    assert by_model["paired"] is False and [g["grader"] for g in by_model["graders"]] == ["mentions Paris"]
    assert (overall["baseGraded"], overall["newGraded"], overall["delta"]) == (20, 20, -0.5)
    assert overall["pValue"] == pytest.approx(stats.two_proportion_p(15, 20, 5, 20))
    assert overall["deltaCi"] == pytest.approx(list(stats.unpaired_rate_interval(15, 20, 5, 20)))
    windows = api.call("GET", f"/online-rules/{rule['id']}/compare", params={
        "base": "2026-05-28T00:00:00Z/2026-05-29T00:00:00Z",
        "new": "2026-05-29T00:00:00Z/2026-05-30T00:00:00Z"}).json()["data"]["overall"]
    assert (windows["baseGraded"], windows["newGraded"]) == (20, 20)
    assert windows["basePassRate"] == 11 / 20 and windows["newPassRate"] == 9 / 20  # even i: day 1
    pages = {}  # the results a page at a time, either way; together they are every result once
    for order in ("oldest", "newest"):
        seen, cursor = [], None
        while True:
            page = api.call("GET", f"/online-rules/{rule['id']}/results", params={
                "order": order, "limit": 15, **({"cursor": cursor} if cursor else {})}).json()["data"]
            seen += [r["id"] for r in page["results"]]
            cursor = page["nextCursor"]
            if cursor is None:
                break
        pages[order] = seen
    assert len(pages["oldest"]) == 40 and pages["oldest"] == sorted(pages["oldest"])
    assert pages["newest"] == pages["oldest"][::-1]
    bad = api.call("GET", f"/online-rules/{rule['id']}/compare", params={"base": "yesterday", "new": "today"})
    assert bad.status_code == 422 and "query parameter base: 'yesterday' is not START/END" in bad.json()["message"]
    for path, params in (("summary", {"split": 'a"b'}), ("compare", {"split": 'a"b', "base": "x", "new": "y"})):
        quoted = api.call("GET", f"/online-rules/{rule['id']}/{path}", params=params)
        assert quoted.status_code == 422 and "without a double quote" in quoted.json()["message"], quoted.text


def test_the_filter_check_previews_the_recent_spans_it_takes(api):
    trace = new_trace_id()
    _post(api, request(span(trace, b"\x41" * 8, "chat gpt-4o", chat_attributes("q", "a")),
                       span(trace, b"\x42" * 8, "chat mini", chat_attributes("q", "a", model="gpt-4o-mini"),
                            start_ns=NOW_NS + 5),
                       span(trace, b"\x43" * 8, "GET /", {"http.method": "GET"})))
    _post(api, request(span(new_trace_id(), b"\x44" * 8, "chat", chat_attributes("q", "a"))), user="bob")
    check = api.call("POST", "/online-rules/filter-check", json={
        "filter": 'gen_ai.request.model startswith "gpt-4o"', "preview": True}).json()["data"]
    assert (check["valid"], check["scanned"]) == (True, 3)  # alice's spans only
    assert [(m["spanId"], m["model"]) for m in check["matches"]] == [("42" * 8, "gpt-4o-mini"), ("41" * 8, "gpt-4o")]
    assert check["matches"][1]["start"] == "2026-05-28T20:26:40Z"


def test_traces_are_searched_and_shown_with_their_verdicts(api):
    rule = _rule(api, _evaluator(api))
    good, bad = new_trace_id(), new_trace_id()
    root = b"\x51" * 8
    _post(api, request(span(good, root, "invoke_agent shop", {"gen_ai.operation.name": "invoke_agent"}),
                       span(good, b"\x52" * 8, "chat gpt-4o", chat_attributes("q", "Paris"), parent=root,
                            start_ns=NOW_NS + 1),
                       span(bad, b"\x53" * 8, "chat gpt-4o", chat_attributes("q", "Rome"), start_ns=NOW_NS + 2)))
    assert len(_results(api, rule["id"], 2)) == 2
    found = api.call("GET", "/traces", params={"filter": 'gen_ai.operation.name == "chat"'}).json()["data"]
    assert found["scanned"] == 3
    assert [(t["traceId"], t["name"], t["spans"], t["verdicts"]) for t in found["traces"]] == [
        (bad.hex(), "chat gpt-4o", 1, {"failed": 1}), (good.hex(), "invoke_agent shop", 2, {"passed": 1})]
    passed = api.call("GET", "/traces", params={"verdict": "passed"}).json()["data"]["traces"]
    assert [t["traceId"] for t in passed] == [good.hex()]
    refused = api.call("GET", "/traces", params={"filter": "a =="})
    assert refused.status_code == 422 and refused.json()["messageArgs"]["problem"]["code"] == "filter.expected"
    spans = api.call("GET", f"/traces/{good.hex()}").json()["data"]
    assert [(s["name"], s["depth"], [v["status"] for v in s["verdicts"]]) for s in spans] == [
        ("invoke_agent shop", 0, []), ("chat gpt-4o", 1, ["passed"])]
    [verdict] = spans[1]["verdicts"]  # named by the rule that gave it
    assert (verdict["ruleName"], verdict["scope"]) == ("chat answers", "span")
    assert spans[1]["model"] == "gpt-4o" and spans[1]["verdicts"][0]["ruleId"] == rule["id"]
    assert api.call("GET", f"/traces/{good.hex()}", user="bob").status_code == 404  # alice's traces are hers
    assert api.call("GET", "/traces/nothex").status_code == 404
