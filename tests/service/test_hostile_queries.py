"""Hostile query parameters and windows, on both databases: a NUL in any API query parameter,
cursors past every database's integer, and the widest backfill window. Each is a 422 naming the
parameter (or an answer), never a 500 or PostgreSQL's "does not fit the database"."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "online"))
from online_support import evaluator, post, results, rule  # noqa: E402
from otlp_build import chat_attributes, new_trace_id, request, span  # noqa: E402
from test_hostile_runs import new_task  # noqa: E402

from assay.server.pages.i18n import say  # noqa: E402


@pytest.fixture
def graded(api) -> dict[str, str]:
    """A rule with one graded span, and a finished run: ids the routes below read."""
    rule_id = rule(api, evaluator(api))["id"]
    assert post(api, request(span(new_trace_id(), b"\x01" * 8, "chat", chat_attributes("q", "Paris")))) \
        .status_code == 200
    assert len(results(api, rule_id, 1)) == 1
    task_id = new_task(api)
    run_id = api.call("POST", f"/tasks/{task_id}/runs").json()["data"]["id"]
    return {"rule": rule_id, "task": task_id, "run": run_id}


@pytest.mark.parametrize(("path", "name"), [
    ("/online-rules/{rule}/summary", "split"),
    ("/online-rules/{rule}/compare", "split"),
    ("/traces", "filter"),
    ("/traces", "verdict"),
    ("/runs/{run}/results", "sampleId"),
    ("/runs/{run}/export", "sampleId"),
    ("/runs/{run}/export", "evaluatorId"),
    ("/tokens", "user"),
    ("/evaluators", "search"),
    ("/tasks/{task}/runs", "unknown\x00name"),
])
def test_a_nul_in_a_query_parameter_is_a_422_naming_it(api, graded, path, name):
    answer = api.call("GET", path.format(**graded), params={name: "a\x00b"})
    body = answer.json()
    assert answer.status_code == 422, answer.text
    shown = name.replace("\x00", "\\u0000")
    assert body["message"] == f"query parameter {shown}: may not contain the NUL character (\\u0000)"
    assert body["messageCode"] == "api.at_parameter"
    assert "不能包含 NUL 字符" in say("zh", body["messageCode"], body["messageArgs"], body["message"])


@pytest.mark.parametrize("cursor", ["9223372036854775808", "99999999999999999999", "١٢٣", "-1", "1.5"])
def test_a_results_cursor_past_any_row_id_is_no_cursor(api, graded, cursor):
    answer = api.call("GET", f"/online-rules/{graded['rule']}/results", params={"cursor": cursor})
    assert answer.status_code == 422, answer.text
    assert answer.json()["messageCode"] == "api.online_rule.cursor"


def test_the_largest_row_id_is_a_cursor_after_every_result(api, graded):
    answer = api.call("GET", f"/online-rules/{graded['rule']}/results", params={"cursor": str(2**63 - 1)})
    assert answer.status_code == 200, answer.text
    assert answer.json()["data"] == {"results": [], "nextCursor": None}


def test_a_backfill_from_year_1_to_9999_reads_every_stored_span(api, graded):
    window = {"from": "0001-01-01T00:00:00Z", "to": "9999-12-31T23:59:59Z"}
    answer = api.call("POST", f"/online-rules/{graded['rule']}/backfill", json=window)
    assert answer.status_code == 200, answer.text
    assert answer.json()["data"] == {"spansRead": 1, "jobsAdded": 0}  # graded already: skipped


@pytest.mark.parametrize("params", [
    {"to": "0001-01-01T00:00:00Z"},  # the default day before it is before year 1
    {"from": "2026-05-29T00:00:00Z", "to": "2026-05-28T00:00:00Z"},
    {"from": "0001-01-01T00:00:00Z", "to": "9999-12-31T23:59:59Z"},
])
@pytest.mark.parametrize("what", ["summary", "compare"])
def test_a_summary_window_out_of_order_or_range_is_a_422(api, graded, params, what):
    extra = {"split": "gen_ai.request.model", "base": "gpt-4o", "new": "gpt-4o-mini"} if what == "compare" else {}
    answer = api.call("GET", f"/online-rules/{graded['rule']}/{what}", params={**params, **extra})
    assert answer.status_code == 422, answer.text
    assert answer.json()["messageCode"] == "api.online_rule.window"
