"""Hostile query parameters and windows, on both databases: a NUL in a query parameter, cursors
past every database's integer, windows at the ends of the calendar. Each is an answer or a 422
naming the parameter, never a 500 or PostgreSQL's "does not fit the database"."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "online"))
from online_support import evaluator, post, results, rule  # noqa: E402
from otlp_build import chat_attributes, new_trace_id, request, span  # noqa: E402
from test_hostile_runs import new_task  # noqa: E402


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
    ("/traces", "filter"),
    ("/runs/{run}/results", "sampleId"),
    ("/runs/{run}/results", "evaluatorId"),
    ("/runs/{run}/export", "sampleId"),
    ("/runs/{run}/export", "evaluatorId"),
    ("/evaluators", "q"),
    ("/tasks", "q"),
    ("/datasets", "q"),
])
def test_a_nul_in_a_filter_or_search_is_compared_as_stored_text(api, graded, path, name):
    """Names and sample ids keep a NUL as U+FFFD (PostgreSQL cannot hold one), so a filter is
    compared the same way: an answer, never PostgreSQL's refusal said as "does not fit the database"."""
    answer = api.call("GET", path.format(**graded), params={name: "a\x00b"})
    assert answer.status_code in (200, 422), answer.text
    assert "api.unstorable" not in answer.text and "failure.with_id" not in answer.text, answer.text


@pytest.mark.parametrize("path", ["/evaluators", "/tasks", "/datasets"])
def test_an_owner_with_a_nul_is_no_user(api, path):
    answer = api.call("GET", path, params={"owner": "alice\x00"})
    assert answer.status_code == 422 and answer.json()["messageCode"] == "api.list.owner", answer.text


@pytest.mark.parametrize("what", ["summary", "compare"])
@pytest.mark.parametrize("key", ["team\x00name", 'say "hi"'])
def test_a_split_key_sqlite_cannot_address_is_a_422_on_both_databases(api, graded, what, key):
    extra = {"base": "a", "new": "b"} if what == "compare" else {}
    answer = api.call("GET", f"/online-rules/{graded['rule']}/{what}", params={**extra, "split": key})
    assert answer.status_code == 422 and answer.json()["messageCode"] == "api.online_rule.split", answer.text


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
