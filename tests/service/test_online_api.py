"""Online evaluation through the HTTP API of the app on both databases: OTLP intake (protobuf,
JSON, gzip, idempotent, partial success, malformed, backlog), online rules (filter validation),
the worker grading what arrives, results, summaries and backfill."""

from __future__ import annotations

import gzip
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parents[1] / "online"))
from google.rpc import status_pb2  # noqa: E402
from online_support import PROTOBUF  # noqa: E402
from online_support import evaluator as _evaluator  # noqa: E402
from online_support import post as _post  # noqa: E402
from online_support import results as _results  # noqa: E402
from online_support import rule as _rule  # noqa: E402
from online_support import span_count as _span_count  # noqa: E402
from otlp_build import NOW_NS, chat_attributes, new_trace_id, request, span  # noqa: E402
from service_support import make_api  # noqa: E402

from assay.server.pages.i18n import say  # noqa: E402
from assay.store import Database  # noqa: E402
from assay.store.online_models import OnlineJob, OnlineSpan  # noqa: E402


def test_spans_are_graded_once_whatever_the_retries(api):
    evaluator_id = _evaluator(api)
    rule = _rule(api, evaluator_id)
    trace = new_trace_id()
    batch = request(
        span(trace, b"\x01" * 8, "chat gpt-4o", chat_attributes("Capital of France?", "Paris.")),
        span(trace, b"\x02" * 8, "chat gpt-4o", chat_attributes("Capital of Italy?", "Milan.", model="gpt-4o-mini"),
             parent=b"\x01" * 8),
        span(trace, b"\x03" * 8, "chat gpt-4o", {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o"},
             parent=b"\x01" * 8),  # content capture off
        span(trace, b"\x04" * 8, "GET /", {"http.method": "GET"}, parent=b"\x01" * 8))
    answered = _post(api, batch)
    assert answered.status_code == 200, answered.content
    assert answered.headers["content-type"] == "application/x-protobuf"
    assert answered.content == b""  # an ExportTraceServiceResponse without partial_success
    results = _results(api, rule["id"], 3)
    by_span = {r["spanId"]: r for r in results}
    assert set(by_span) == {"01" * 8, "02" * 8, "03" * 8}
    assert by_span["01" * 8]["status"] == "passed" and by_span["01" * 8]["traceId"] == trace.hex()
    assert by_span["02" * 8]["status"] == "failed" and by_span["02" * 8]["score"] == 0.0
    assert by_span["03" * 8]["status"] == "not_applicable" and "content capture" in by_span["03" * 8]["reason"]
    # The exporter retries: the same batch again, gzip this time, stores and grades nothing more.
    again = api.client.post(
        "/v1/traces", content=gzip.compress(batch.SerializeToString()),
        headers={**api.as_("alice"), **PROTOBUF, "Content-Encoding": "gzip"})
    assert again.status_code == 200, again.content
    time.sleep(1.0)
    assert len(_results(api, rule["id"], 4, timeout_s=1)) == 3
    assert _span_count(api) == 4
    passed = api.call("GET", f"/online-rules/{rule['id']}/results", params={"status": "passed"}).json()["data"]
    assert [r["spanId"] for r in passed["results"]] == ["01" * 8]
    summary = api.call("GET", f"/online-rules/{rule['id']}/summary",
                       params={"from": "2026-05-28T00:00:00Z", "to": "2026-05-30T00:00:00Z", "by": "day",
                               "split": "gen_ai.request.model"}).json()["data"]
    models = {entry["value"]: entry for entry in summary}
    assert models["gpt-4o"]["graded"] == 1 and models["gpt-4o"]["passRate"] == 1.0
    assert models["gpt-4o"]["notCounted"] == {"not_applicable": 1}
    assert models["gpt-4o-mini"]["passRate"] == 0.0 and models["gpt-4o-mini"]["passRateCi"][1] < 1.0
    assert models["gpt-4o"]["start"] == "2026-05-28T00:00:00Z"


def test_json_encoding_and_partial_success(api):
    trace = new_trace_id().hex()
    document = {"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"spans": [
        {"traceId": trace, "spanId": "0a" * 8, "name": "chat", "startTimeUnixNano": str(NOW_NS),
         "endTimeUnixNano": str(NOW_NS + 10), "attributes": [
             {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
             {"key": "gen_ai.usage.input_tokens", "value": {"intValue": "7"}}]},
        {"traceId": trace, "spanId": "0b", "name": "bad id"},
        {"traceId": "00" * 16, "spanId": "0c" * 8, "name": "zero trace"},
        # past a signed 64-bit nanosecond count (the year 2262): a column of neither database holds it
        {"traceId": trace, "spanId": "0d" * 8, "name": "far future", "startTimeUnixNano": str(NOW_NS),
         "endTimeUnixNano": str((1 << 64) - 1)}]}]}]}
    answered = api.client.post("/v1/traces", json=document, headers=api.as_("alice"))
    assert answered.status_code == 200, answered.text
    partial = answered.json()["partialSuccess"]
    assert partial["rejectedSpans"] == "3"
    assert "spans[1].spanId: must be 8 bytes" in partial["errorMessage"]
    assert "spans[2].traceId: must not be all zeros" in partial["errorMessage"]
    assert f"spans[3].endTimeUnixNano: {(1 << 64) - 1} is past 2262-04-11" in partial["errorMessage"]
    database = Database(api.database_url)
    with database.session() as session:
        stored = session.query(OnlineSpan).one()
        assert (stored.trace_id, stored.span_id, stored.attributes["gen_ai.usage.input_tokens"]) == (trace, "0a" * 8, 7)
    database.dispose()


def _status(answer, encoding: str = "protobuf") -> tuple[int, str]:
    """The ``google.rpc.Status`` of a refusal, read with googleapis' own message (protobuf) or as
    OTLP's JSON: ``(gRPC code, message)``."""
    if encoding == "json":
        assert answer.headers["content-type"] == "application/json"
        document = answer.json()
        assert set(document) == {"code", "message"}, document
        return document["code"], document["message"]
    assert answer.headers["content-type"] == "application/x-protobuf"
    status = status_pb2.Status()
    status.ParseFromString(answer.content)
    return status.code, status.message


def test_what_the_intake_refuses_is_a_status_in_the_requests_encoding(sqlite_api):
    api = sqlite_api
    json_type = {"Content-Type": "application/json"}
    malformed = api.client.post("/v1/traces", content=b"\xff\xff\xff", headers={**api.as_("alice"), **PROTOBUF})
    assert malformed.status_code == 400
    code, message = _status(malformed)
    assert code == 3 and "not an OTLP ExportTraceServiceRequest in protobuf" in message
    bad_json = api.client.post("/v1/traces", content=b"[1", headers={**api.as_("alice"), **json_type})
    assert bad_json.status_code == 400 and _status(bad_json, "json")[0] == 3
    assert "in JSON" in _status(bad_json, "json")[1]
    other = api.client.post("/v1/traces", content=b"x", headers={**api.as_("alice"), "Content-Type": "text/plain"})
    assert other.status_code == 415 and _status(other, "json") == (3, "Content-Type 'text/plain' is not accepted: "
                                                                    "send application/x-protobuf or application/json")
    not_gzip = api.client.post("/v1/traces", content=b"plain", headers={**api.as_("alice"), **PROTOBUF,
                                                                        "Content-Encoding": "gzip"})
    assert not_gzip.status_code == 400 and "not valid gzip" in _status(not_gzip)[1]
    for encoding, headers in (("protobuf", PROTOBUF), ("json", json_type)):
        no_token = api.client.post("/v1/traces", content=b"", headers=headers)
        assert no_token.status_code == 401 and no_token.headers["www-authenticate"] == "Bearer"
        assert no_token.headers["x-request-id"]
        code, message = _status(no_token, encoding)
        assert code == 16 and "token" in message.lower()
        wrong = api.client.post("/v1/traces", content=b"", headers={**headers, "Authorization": "Bearer nope"})
        assert wrong.status_code == 401 and _status(wrong, encoding)[0] == 16
    too_large = api.client.post("/v1/traces", content=b"\x00" * (17 << 20), headers={**api.as_("alice"), **PROTOBUF})
    assert too_large.status_code == 413
    code, message = _status(too_large)
    assert code == 8 and "larger than 16,777,216 bytes" in message
    elsewhere = api.client.get("/api/v1/evaluators", headers={**PROTOBUF})
    assert elsewhere.status_code == 401 and elsewhere.json()["code"] == 401  # other paths answer as the API does


def test_a_gzip_bomb_is_refused_unread(tmp_path, shared_resources):
    for api in make_api(f"sqlite:///{tmp_path / 'a.db'}", shared_resources, otlp_max_body_bytes=64 << 10):
        bomb = gzip.compress(b"\x00" * (8 << 20))
        answered = api.client.post("/v1/traces", content=bomb, headers={**api.as_("alice"), **PROTOBUF,
                                                                        "Content-Encoding": "gzip"})
        assert answered.status_code == 413, answered.content
        assert _status(answered) == (8, "the request inflates to more than 65,536 bytes: send smaller batches")


def test_a_full_backlog_answers_429_with_retry_after(tmp_path, shared_resources):
    for api in make_api(f"sqlite:///{tmp_path / 'b.db'}", shared_resources, online_max_backlog=1):
        _rule(api, _evaluator(api), filter="", scope="trace", quietS=600)  # its job waits: the backlog stays
        trace = new_trace_id()
        assert _post(api, request(span(trace, b"\x01" * 8, "a", {}))).status_code == 200
        time.sleep(1.1)  # the backlog is read at most once a second
        refused = _post(api, request(span(trace, b"\x02" * 8, "b", {})))
        assert refused.status_code == 429 and refused.headers["retry-after"] == "5"
        code, message = _status(refused)
        assert code == 8 and "backlog is full" in message


def test_rules_are_validated_when_saved(api):
    evaluator_id = _evaluator(api)
    bad = api.call("POST", "/online-rules", json={"name": "r", "filter": 'gen_ai.request.model == ',
                                                  "evaluators": [{"evaluatorId": evaluator_id}]})
    assert bad.status_code == 422
    assert bad.json()["message"] == "filter: at position 25: expected a value (\"text\", a number, true, false or " \
                                    "null), found the end"
    said = bad.json()  # the phrase travels with it, so the pages say it in their language, position included
    assert (said["messageCode"], said["messageArgs"]["problem"]["code"]) == ("online.bad_filter", "filter.expected")
    assert said["messageArgs"]["problem"]["args"]["position"] == 25
    missing = api.call("POST", "/online-rules", json={"name": "r", "evaluators": [
        {"evaluatorId": "00000000-0000-0000-0000-000000000000"}]})
    assert missing.status_code == 422 and "evaluators[0].evaluatorId" in missing.json()["message"]
    rate = api.call("POST", "/online-rules", json={"name": "r", "sampleRate": 1.5,
                                                   "evaluators": [{"evaluatorId": evaluator_id}]})
    assert rate.status_code == 422
    rule = _rule(api, evaluator_id, scope="trace", quietS=5)
    changed = api.call("PATCH", f"/online-rules/{rule['id']}", json={"enabled": False, "filter": "span.name"})
    assert changed.status_code == 200 and changed.json()["data"]["enabled"] is False
    assert api.call("PATCH", f"/online-rules/{rule['id']}", json={"filter": "a in b"}).status_code == 422
    read = api.call("GET", f"/online-rules/{rule['id']}", user="bob")  # shared work: bob reads alice's rule
    assert read.status_code == 200 and read.json()["data"]["owner"] == "alice"
    assert read.json()["data"]["evaluators"][0]["name"] == "mentions Paris"
    assert api.call("GET", f"/online-rules/{rule['id']}/results", user="bob").status_code == 200
    for method, path, body in (("PATCH", "", {"enabled": True}), ("DELETE", "", None),
                               ("POST", "/backfill", {"from": "2000-01-01T00:00:00Z", "to": "2001-01-01T00:00:00Z"})):
        refused = api.call(method, f"/online-rules/{rule['id']}{path}", user="bob", json=body)
        assert refused.status_code == 403, (method, path, refused.text)
        assert "belongs to alice" in refused.json()["message"]
    assert api.call("GET", "/online-rules", user="bob").json()["data"] == []  # the list is the caller's own
    check = api.call("POST", "/online-rules/filter-check", json={"filter": "a == 1 and"}).json()["data"]
    assert (check["valid"], check["position"], check["messageCode"]) == (False, 11, "filter.expected")
    assert check["messageArgs"]["position"] == 11 and check["matches"] == []
    assert api.call("DELETE", f"/online-rules/{rule['id']}").status_code == 200
    assert api.call("GET", "/online-rules").json()["data"] == []


def test_trace_scope_waits_for_the_root_and_regrades_late_spans_once(api):
    evaluator_id = _evaluator(api)
    rule = _rule(api, evaluator_id, scope="trace", quietS=0, filter="")
    trace = new_trace_id()
    root, chat = b"\x10" * 8, b"\x11" * 8
    assert _post(api, request(span(trace, chat, "chat", chat_attributes("Where?", "Rome"), parent=root))).status_code \
        == 200
    time.sleep(1.0)
    assert _results(api, rule["id"], 1, timeout_s=0.5) == []  # no root yet: not graded
    tool = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup", "gen_ai.tool.call.id": "c1",
            "gen_ai.tool.call.arguments": '{"city": "Rome"}', "gen_ai.tool.call.result": "found"}
    assert _post(api, request(span(trace, root, "invoke_agent", {"gen_ai.operation.name": "invoke_agent"}),
                              span(trace, b"\x12" * 8, "execute_tool lookup", tool, parent=root))).status_code == 200
    first = _results(api, rule["id"], 1)
    assert [(r["generation"], r["status"], r["spanId"]) for r in first] == [(1, "failed", root.hex())]
    late = chat_attributes("And France?", "Paris")
    assert _post(api, request(span(trace, b"\x13" * 8, "chat", late, parent=root, start_ns=NOW_NS + 10**9))) \
        .status_code == 200
    second = _results(api, rule["id"], 2)
    assert sorted((r["generation"], r["status"]) for r in second) == [(1, "failed"), (2, "passed")]
    assert _post(api, request(span(trace, b"\x14" * 8, "chat", late, parent=root))).status_code == 200
    time.sleep(1.0)
    assert len(_results(api, rule["id"], 3, timeout_s=0.5)) == 2  # graded once more, never twice more


def test_backfill_grades_stored_spans_and_skips_what_it_graded(api):
    trace = new_trace_id()
    _post(api, request(span(trace, b"\x21" * 8, "chat", chat_attributes("q", "Paris")),
                       span(trace, b"\x22" * 8, "chat", chat_attributes("q", "Oslo"), start_ns=NOW_NS - 10 * 86400 * 10**9)))
    rule = _rule(api, _evaluator(api))
    assert _results(api, rule["id"], 1, timeout_s=0.5) == []  # the rule came after the spans
    window = {"from": "2026-05-28T00:00:00Z", "to": "2026-05-30T00:00:00Z"}
    done = api.call("POST", f"/online-rules/{rule['id']}/backfill", json=window).json()["data"]
    assert done == {"spansRead": 1, "jobsAdded": 1}
    assert [r["status"] for r in _results(api, rule["id"], 1)] == ["passed"]
    again = api.call("POST", f"/online-rules/{rule['id']}/backfill", json=window).json()["data"]
    assert again == {"spansRead": 1, "jobsAdded": 0}


def test_a_conversation_is_graded_across_its_traces(api):
    rule = _rule(api, _evaluator(api), scope="conversation", quietS=0, filter="")
    first, second = new_trace_id(), new_trace_id()
    conversation = {"gen_ai.conversation.id": "conv-42"}
    assert _post(api, request(
        span(first, b"\x31" * 8, "chat", {**chat_attributes("Capital of France?", "Lyon"), **conversation}),
        span(second, b"\x32" * 8, "chat", {**chat_attributes("Sure?", "Sorry: Paris"), **conversation},
             start_ns=NOW_NS + 10**9))).status_code == 200
    [result] = _results(api, rule["id"], 1)
    assert (result["target"], result["status"], result["generation"]) == ("conv-42", "passed", 1)
    assert result["spanId"] == "31" * 8  # filed under the conversation's first root span
    third = new_trace_id()
    _post(api, request(span(third, b"\x33" * 8, "chat", {**chat_attributes("Thanks", "Lyon!"), **conversation},
                            start_ns=NOW_NS + 2 * 10**9)))
    later = _results(api, rule["id"], 2)
    assert sorted((r["generation"], r["status"]) for r in later) == [(1, "passed"), (2, "failed")]


def test_a_rule_spends_at_most_its_daily_judge_budget(tmp_path, judge_server):
    from assay.runner.resources import build_resources
    from assay.settings import Settings

    resources = build_resources(Settings.from_env({
        "ASSAY_JUDGE_BASE_URL": judge_server.url, "ASSAY_JUDGE_API_KEY": "test-key", "ASSAY_JUDGE_MODEL": "judge-test",
        "ASSAY_JUDGE_CACHE": "off"}))
    try:
        for api in make_api(f"sqlite:///{tmp_path / 'j.db'}", resources):
            judge = api.call("POST", "/evaluators", json={"name": "judge", "type": "llm",
                                                          "config": {"rubric": "the answer is right"}})
            assert judge.status_code == 200, judge.text
            rule = _rule(api, judge.json()["data"]["id"], judgeBudgetPerDay=2)
            before = len(judge_server.requests)
            spans = [span(new_trace_id(), bytes([i + 1]) * 8, "chat", chat_attributes("q", f"answer {i}"))
                     for i in range(5)]
            assert _post(api, request(*spans)).status_code == 200
            results = _results(api, rule["id"], 5)
            assert sorted(r["status"] for r in results) == ["passed", "passed", "skipped", "skipped", "skipped"]
            assert {r["errorCode"] for r in results if r["status"] == "skipped"} == {"budget"}
            asked = [r.body["messages"][-1]["content"] for r in judge_server.requests[before:]]
            # The judge saw two of the outputs (a grading may take more than one request of it).
            assert len({n for n in range(5) for text in asked if f"answer {n}" in text}) == 2
    finally:
        resources.code_runner.close()
        resources.judge_client.close()


def test_a_server_started_with_the_retired_online_workers_says_it_is_not_read(tmp_path, shared_resources, caplog):
    with caplog.at_level("WARNING", logger="assay.server"):
        for api in make_api(f"sqlite:///{tmp_path / 'w.db'}", shared_resources, environ={"ASSAY_ONLINE_WORKERS": "0"}):
            assert api.client.get("/ready").status_code == 200
    said = [r.getMessage() for r in caplog.records if "ASSAY_ONLINE_WORKERS" in r.getMessage()]
    assert said == ["ASSAY_ONLINE_WORKERS is no longer read: online rules' jobs are graded by the run slots "
                    "(`ASSAY_RUN_SLOTS`), users served in turn with the task runs"]


def test_an_online_slice_asks_its_judge_about_several_spans_at_once(tmp_path, judge_server):
    from judge_server import Behaviour, completion

    from assay.runner.resources import build_resources
    from assay.settings import Settings

    judge_server.respond = lambda body: Behaviour(body=completion('{"score": 5, "reasoning": "fine"}'), delay_s=0.3)
    resources = build_resources(Settings.from_env({
        "ASSAY_JUDGE_BASE_URL": judge_server.url, "ASSAY_JUDGE_API_KEY": "test-key", "ASSAY_JUDGE_MODEL": "judge-test",
        "ASSAY_JUDGE_CACHE": "off"}))
    try:
        for api in make_api(f"sqlite:///{tmp_path / 'c.db'}", resources, run_slots=1):
            judge = api.call("POST", "/evaluators", json={"name": "judge", "type": "llm",
                                                          "config": {"rubric": "the answer is right"}})
            rule = _rule(api, judge.json()["data"]["id"])
            spans = [span(new_trace_id(), bytes([i + 1]) * 8, "chat", chat_attributes("q", f"answer {i}"))
                     for i in range(8)]
            assert _post(api, request(*spans)).status_code == 200
            results = _results(api, rule["id"], 8)
            assert sorted(r["status"] for r in results) == ["passed"] * 8
            assert judge_server.max_in_flight > 1  # one slot, one slice: its jobs were graded at once
    finally:
        resources.code_runner.close()


def test_a_disabled_rule_grades_nothing_more(api):
    """Switching a rule off drops its jobs still waiting (here a trace's quiet window of an hour),
    a backfill of it is refused until it is on again, and a slice already taken stores nothing."""
    rule = _rule(api, _evaluator(api), scope="trace", quietS=3600, filter="")
    trace = new_trace_id()
    assert _post(api, request(span(trace, b"\x31" * 8, "chat", chat_attributes("q", "Paris")))).status_code == 200
    assert _jobs(api, rule["id"], "pending", expect=1) == 1  # the planner made it; due in an hour
    off = api.call("PATCH", f"/online-rules/{rule['id']}", json={"enabled": False})
    assert off.status_code == 200 and off.json()["data"]["enabled"] is False
    assert _jobs(api, rule["id"], "pending") == 0
    window = {"from": "2026-05-28T00:00:00Z", "to": "2026-05-30T00:00:00Z"}
    refused = api.call("POST", f"/online-rules/{rule['id']}/backfill", json=window)
    body = refused.json()
    assert refused.status_code == 409 and "'chat answers' is disabled" in body["message"], refused.text
    assert "已停用" in say("zh", body["messageCode"], body["messageArgs"], body["message"])
    assert api.call("PATCH", f"/online-rules/{rule['id']}", json={"enabled": True}).status_code == 200
    assert api.call("POST", f"/online-rules/{rule['id']}/backfill", json=window).json()["data"]["jobsAdded"] == 1
    assert [r["status"] for r in _results(api, rule["id"], 1)] == ["passed"]  # backfilled traces are due at once


def test_a_rule_switched_off_while_its_slice_is_graded_stores_nothing_of_it(api):
    slow = api.call("POST", "/evaluators", json={"name": "slow", "type": "code", "config": {
        "language": "python", "code": "import time\n\ndef evaluate(input, output, expected, metadata):\n"
                                      "    time.sleep(3)\n    return {'passed': True}\n"}})
    assert slow.status_code == 200, slow.text
    rule = _rule(api, slow.json()["data"]["id"])
    assert _post(api, request(span(new_trace_id(), b"\x41" * 8, "chat", chat_attributes("q", "a")))).status_code == 200
    assert _jobs(api, rule["id"], "leased", expect=1) == 1  # a run slot is grading it
    assert api.call("PATCH", f"/online-rules/{rule['id']}", json={"enabled": False}).status_code == 200
    assert _jobs(api, rule["id"], "done", expect=1, timeout_s=30) == 1
    assert _results(api, rule["id"], 1, timeout_s=0.5) == []


def _jobs(api, rule_id: str, state: str, expect: int | None = None, timeout_s: float = 10.0) -> int:
    """How many of the rule's jobs are in ``state``, waiting up to ``timeout_s`` for ``expect``."""
    database = Database(api.database_url)
    deadline = time.monotonic() + timeout_s
    try:
        while True:
            with database.session() as session:
                found = session.query(OnlineJob).filter_by(rule_id=rule_id, state=state).count()
            if expect is None or found == expect or time.monotonic() > deadline:
                return found
            time.sleep(0.1)
    finally:
        database.dispose()
