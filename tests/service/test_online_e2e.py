"""Online evaluation as an application sees it: the real OpenTelemetry SDK and its OTLP/HTTP
exporter (gzip) send GenAI spans to a running ``assay serve`` (on SQLite and on PostgreSQL);
the server's rules grade them; a batch sent again after a crash and restart changes nothing; a
full backlog answers 429 with ``Retry-After`` and the exporter's own retry gets the batch in."""

from __future__ import annotations

import json
import os
import signal
import threading
import time

import httpx2 as httpx
import pytest
import requests
from google.rpc import status_pb2
from live_serve import Serve, assay
from opentelemetry.exporter.otlp.proto.http import Compression
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExportResult
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind, StatusCode

from assay.store import Database
from assay.store.online_models import OnlineSpan


def _server(tmp_path, db_url: str, **env: str):
    environ = {**os.environ, "ASSAY_DATABASE_URL": db_url, "ASSAY_JUDGE_CACHE": "off", "ASSAY_QUEUE_POLL_MS": "100",
               **env}
    assert assay("users", "create", "shop", env=environ).returncode == 0
    made = assay("tokens", "create", "shop", env=environ)
    assert made.returncode == 0, made.stderr
    token = made.stdout.strip().splitlines()[-1]
    return Serve(environ, tmp_path / "server.log", "--log-level", "warning").start(), token


def _messages(role: str, text: str) -> str:
    return json.dumps([{"role": role, "parts": [{"type": "text", "content": text}]}])


def _application_spans() -> list:
    """What an instrumented agent records (the GenAI conventions, content captured but on one call)."""
    memory = InMemorySpanExporter()
    provider = TracerProvider(resource=Resource.create({"service.name": "shop"}))
    provider.add_span_processor(SimpleSpanProcessor(memory))
    tracer = provider.get_tracer("shop.agent")
    with tracer.start_as_current_span("invoke_agent shop", attributes={"gen_ai.operation.name": "invoke_agent"}):
        with tracer.start_as_current_span("chat gpt-4o", kind=SpanKind.CLIENT, attributes={
                "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o", "gen_ai.usage.input_tokens": 9,
                "gen_ai.input.messages": _messages("user", "Capital of France?"),
                "gen_ai.output.messages": _messages("assistant", "Paris.")}):
            pass
        with tracer.start_as_current_span("execute_tool lookup", attributes={
                "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup",
                "gen_ai.tool.call.arguments": '{"q": "France"}'}) as tool:
            tool.set_status(StatusCode.ERROR, "lookup timed out")
        with tracer.start_as_current_span("chat gpt-4o-mini", kind=SpanKind.CLIENT, attributes={
                "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o-mini"}):
            pass  # content capture off for this call
    provider.shutdown()
    return list(memory.get_finished_spans())


def _results(api: httpx.Client, rule_id: str, expect: int, timeout_s: float = 30) -> list[dict]:
    deadline = time.monotonic() + timeout_s
    while True:
        got = api.get(f"/online-rules/{rule_id}/results").json()["data"]["results"]
        if len(got) >= expect or time.monotonic() > deadline:
            return got
        time.sleep(0.2)


def _setup_rules(api: httpx.Client, quiet_s: int = 1) -> tuple[str, str]:
    evaluator = api.post("/evaluators", json={"name": "says Paris", "type": "preset",
                                              "config": {"presetType": "regex", "params": {"pattern": "Paris"}}})
    evaluator_id = evaluator.json()["data"]["id"]
    span_rule = api.post("/online-rules", json={"name": "answers", "filter": 'gen_ai.operation.name == "chat"',
                                                "evaluators": [{"evaluatorId": evaluator_id}]}).json()["data"]
    trace_rule = api.post("/online-rules", json={"name": "agent runs", "scope": "trace", "quietS": quiet_s,
                                                 "evaluators": [{"evaluatorId": evaluator_id}]}).json()["data"]
    return span_rule["id"], trace_rule["id"]


def test_an_instrumented_application_is_graded_once_across_retries_and_restarts(tmp_path, db_url):
    server, token = _server(tmp_path, db_url)
    try:
        with httpx.Client(base_url=server.url + "/api/v1", headers={"Authorization": f"Bearer {token}"},
                          timeout=30) as api:
            span_rule, trace_rule = _setup_rules(api)
            spans = _application_spans()
            exporter = OTLPSpanExporter(endpoint=server.url + "/v1/traces", headers={"Authorization": f"Bearer {token}"},
                                        compression=Compression.Gzip, timeout=60)
            assert exporter.export(spans) == SpanExportResult.SUCCESS
            answers = {r["spanId"]: r for r in _results(api, span_rule, 2)}
            by_model = {}
            for span in spans:
                if span.name.startswith("chat"):
                    by_model[span.attributes["gen_ai.request.model"]] = format(span.context.span_id, "016x")
            assert answers[by_model["gpt-4o"]]["status"] == "passed"
            assert answers[by_model["gpt-4o-mini"]]["status"] == "not_applicable"
            [trace] = _results(api, trace_rule, 1)
            assert (trace["status"], trace["generation"]) == ("passed", 1)
            assert trace["traceId"] == format(spans[0].context.trace_id, "032x")

            # The server dies; the application's exporter, retrying, sends the same batch again to its successor.
            server.stop(signal.SIGKILL)
            outcome: list[SpanExportResult] = []
            sender = threading.Thread(target=lambda: outcome.append(exporter.export(spans)))
            sender.start()
            time.sleep(0.5)
            server.start()
            sender.join(timeout=90)
            assert outcome == [SpanExportResult.SUCCESS]
            time.sleep(2.0)  # a quiet window and a poll: anything scheduled again would be graded by now
            assert len(_results(api, span_rule, 3, timeout_s=0)) == 2
            assert len(_results(api, trace_rule, 2, timeout_s=0)) == 1
            summary = api.get(f"/online-rules/{span_rule}/summary", params={"by": "hour",
                                                                           "split": "gen_ai.request.model"})
            entries = {e["value"]: e for e in summary.json()["data"]}
            assert entries["gpt-4o"]["passRate"] == 1.0 and entries["gpt-4o"]["passRateCi"][0] < 1.0
            assert entries["gpt-4o-mini"]["notCounted"] == {"not_applicable": 1}
            user_env = {**os.environ, "ASSAY_TOKEN": token}
            compared = assay("compare", "gpt-4o", "gpt-4o-mini", "--service", server.url, "--rule", span_rule,
                             "--split", "gen_ai.request.model", "--json", env=user_env)
            assert compared.returncode == 0, compared.stderr
            overall = json.loads(compared.stdout)["overall"]
            assert (overall["base_graded"], overall["new_graded"], overall["base_pass_rate"]) == (1, 0, 1.0)
            assert overall["new_not_counted"] == {"not_applicable": 1} and overall["delta"] is None
            table = assay("compare", "gpt-4o", "gpt-4o-mini", "--service", server.url, "--rule", span_rule,
                          "--split", "gen_ai.request.model", env=user_env)
            assert table.returncode == 0 and "unpaired" in table.stdout
            assert assay("compare", "a", "b", "--split", "x", env=user_env).returncode == 2
        database = Database(db_url)
        with database.session() as session:
            assert session.query(OnlineSpan).count() == len(spans) == 4
        database.dispose()
    finally:
        server.stop()


def test_a_full_backlog_slows_the_exporter_down_without_losing_a_batch(tmp_path, db_url):
    server, token = _server(tmp_path, db_url, ASSAY_ONLINE_MAX_BACKLOG="1")
    try:
        with httpx.Client(base_url=server.url + "/api/v1", headers={"Authorization": f"Bearer {token}"},
                          timeout=30) as api:
            # The trace rule's job waits 4 s of quiet: until then the backlog (at most 1 job here) is full.
            span_rule, trace_rule = _setup_rules(api, quiet_s=4)
            exporter = OTLPSpanExporter(endpoint=server.url + "/v1/traces", headers={"Authorization": f"Bearer {token}"},
                                        timeout=60)
            assert exporter.export(_application_spans()) == SpanExportResult.SUCCESS  # fills the backlog
            time.sleep(1.1)  # the backlog is read at most once a second
            started = time.monotonic()
            assert exporter.export(_application_spans()) == SpanExportResult.SUCCESS  # 429, then a retry
            assert time.monotonic() - started >= 4.0  # it waited as Retry-After said
            assert time.monotonic() - started < 30
            assert len(_results(api, span_rule, 4)) == 4
            assert len(_results(api, trace_rule, 2)) == 2
    finally:
        server.stop()


@pytest.fixture(autouse=True)
def _no_exporter_env(monkeypatch):
    for name in list(os.environ):
        if name.startswith("OTEL_"):
            monkeypatch.delenv(name)


@pytest.mark.postgres
def test_spans_sent_while_postgresql_restarts_arrive_once_it_is_back(own_postgres, tmp_path):
    url = own_postgres.new_database()
    server, token = _server(tmp_path, url)
    try:
        spans = _application_spans()
        exporter = OTLPSpanExporter(endpoint=server.url + "/v1/traces", headers={"Authorization": f"Bearer {token}"},
                                    timeout=60)
        assert httpx.get(server.url + "/ready", timeout=10).status_code == 200
        own_postgres.shut_down()
        try:
            body = _encoded(spans)
            refused = httpx.post(server.url + "/v1/traces", content=body, timeout=30, headers={
                "Authorization": f"Bearer {token}", "Content-Type": "application/x-protobuf"})
            assert refused.status_code == 503 and refused.headers.get("retry-after"), refused.text
            outcome: list[SpanExportResult] = []
            sender = threading.Thread(target=lambda: outcome.append(exporter.export(spans)))
            sender.start()
            time.sleep(1.5)
        finally:
            own_postgres.launch()
        sender.join(timeout=90)
        assert outcome == [SpanExportResult.SUCCESS]
        database = Database(url)
        with database.session() as session:
            assert session.query(OnlineSpan).count() == len(spans)
        database.dispose()
    finally:
        server.stop()


def _encoded(spans) -> bytes:
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    return encode_spans(spans).SerializePartialToString()


def test_the_exporter_is_refused_with_an_otlp_status_it_does_not_retry(tmp_path):
    """A wrong token (401) and a batch over the body limit (413) reach the real exporter as
    ``google.rpc.Status`` messages in protobuf, its encoding; neither is retried."""
    server, token = _server(tmp_path, f"sqlite:///{tmp_path / 'assay.db'}", ASSAY_OTLP_MAX_BODY_BYTES="2048")
    seen: list[requests.Response] = []
    session = requests.Session()
    session.hooks["response"].append(lambda response, *_args, **_kwargs: seen.append(response))
    try:
        for bearer, status, code, said in (("not-a-token", 401, 16, "token"), (token, 413, 8, "2,048 bytes")):
            seen.clear()
            exporter = OTLPSpanExporter(endpoint=server.url + "/v1/traces", headers={"Authorization": f"Bearer {bearer}"},
                                        session=session, timeout=30)
            spans = _application_spans() * (20 if status == 413 else 1)
            assert exporter.export(spans) == SpanExportResult.FAILURE
            assert [r.status_code for r in seen] == [status]  # answered once: not retried
            assert seen[0].headers["content-type"] == "application/x-protobuf"
            answer = status_pb2.Status()
            answer.ParseFromString(seen[0].content)
            assert answer.code == code and said in answer.message, answer
    finally:
        session.close()
        server.stop()
