"""GenAI spans made by a real instrumentation, graded by assay serve: a small agent
(tests/online/instrumented_app.py) runs in its own venv (``make otel-app``: openai 2.x with
``opentelemetry-instrumentation-openai-v2``), calls a scripted OpenAI-compatible server on
127.0.0.1 (a tool call, then an answer), and exports its spans over OTLP/HTTP to a running
``assay serve``. With content capture on, the rules' evaluators see the messages the
instrumentation recorded, the tool call among them, and a trace's transcript holds it; with
capture off (the instrumentation's default) every result is "not applicable"."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx2 as httpx
import pytest
from live_serve import Serve, assay

import assay as library
from assay.service.online.mapping import group_sample
from assay.store import Database
from assay.store.online_models import OnlineSpan

sys.path.insert(0, str(Path(__file__).parents[1]))
from judge_server import Behaviour, JudgeServer, completion  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
APP_PYTHON = ROOT / ".venv-otel-app" / "bin" / "python"
APP = ROOT / "tests" / "online" / "instrumented_app.py"
CAPTURE_ON = {"OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY",
              "OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental"}
ANSWER = "It is sunny and 21 °C in Paris."
ECHO = '''def evaluate(input, output, expected, metadata):
    return {"passed": bool(output), "reason": "echo",
            "details": {"input": input, "output": output, "model": metadata.get("model"),
                        "tokens": metadata.get("tokens"), "messages": metadata.get("messages")}}
'''

pytestmark = pytest.mark.skipif(not APP_PYTHON.exists(), reason=(
    "no .venv-otel-app: `make otel-app` installs openai 2.x and opentelemetry-instrumentation-openai-v2 there"))


def _model_answers(body: dict) -> Behaviour:
    """The tool call first; the answer once the tool's result is in the conversation."""
    if any(m.get("role") == "tool" for m in body["messages"]):
        return Behaviour(body=completion(ANSWER, model="gpt-4o-2024-08-06", prompt_tokens=40, completion_tokens=12))
    called = completion(None, model="gpt-4o-2024-08-06", tool_arguments='{"city": "Paris"}')
    called["choices"][0]["message"]["tool_calls"][0]["function"]["name"] = "get_weather"
    called["choices"][0]["finish_reason"] = "tool_calls"
    return Behaviour(body=called)


def _run_app(model: JudgeServer, server: Serve, token: str, question: str, **env: str) -> str:
    environ = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "OPENAI_"))}
    environ |= {"OPENAI_BASE_URL": model.url, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": server.url + "/v1/traces",
                "OTEL_EXPORTER_OTLP_HEADERS": f"Authorization=Bearer%20{token}",
                "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION": "gzip", **env}
    ran = subprocess.run([str(APP_PYTHON), str(APP), question], env=environ, capture_output=True, text=True,
                         timeout=120)
    assert ran.returncode == 0, ran.stderr
    return ran.stdout.strip().splitlines()[-1]


def _results(api: httpx.Client, rule_id: str, expect: int) -> list[dict]:
    deadline = time.monotonic() + 60
    while True:
        got = api.get(f"/online-rules/{rule_id}/results").json()["data"]["results"]
        if len(got) >= expect:
            return got
        assert time.monotonic() < deadline, got
        time.sleep(0.2)


def test_spans_of_the_openai_instrumentation_are_graded(tmp_path):
    db_url = f"sqlite:///{tmp_path / 'assay.db'}"
    environ = {**os.environ, "ASSAY_DATABASE_URL": db_url, "ASSAY_JUDGE_CACHE": "off", "ASSAY_QUEUE_POLL_MS": "100"}
    assert assay("users", "create", "shop", env=environ).returncode == 0
    token = assay("tokens", "create", "shop", env=environ).stdout.strip().splitlines()[-1]
    server = Serve(environ, tmp_path / "server.log", "--log-level", "warning").start()
    model = JudgeServer().start()
    model.respond = _model_answers
    try:
        with httpx.Client(base_url=server.url + "/api/v1", headers={"Authorization": f"Bearer {token}"},
                          timeout=30) as api:
            echo = api.post("/evaluators", json={"name": "echo", "type": "code",
                                                 "config": {"language": "python", "code": ECHO}})
            assert echo.status_code == 200, echo.text
            evaluators = [{"evaluatorId": echo.json()["data"]["id"]}]
            calls = api.post("/online-rules", json={"name": "calls", "filter": 'gen_ai.operation.name == "chat"',
                                                    "evaluators": evaluators}).json()["data"]["id"]
            runs = api.post("/online-rules", json={"name": "runs", "scope": "trace", "quietS": 1,
                                                   "evaluators": evaluators}).json()["data"]["id"]
            captured = _run_app(model, server, token, "Weather in Paris?", **CAPTURE_ON)
            bare = _run_app(model, server, token, "Weather in Paris, without capture?")
            assert len(model.requests) == 4

            by_trace: dict[str, list[dict]] = {}
            for result in _results(api, calls, 4):
                by_trace.setdefault(result["traceId"], []).append(result)
            assert {r["status"] for r in by_trace[bare]} == {"not_applicable"}  # capture off: no content
            first, second = sorted(by_trace[captured], key=lambda r: len(r["details"]["messages"]["input"]))
            assert first["status"] == "failed" and second["status"] == "passed"  # the tool call has no text
            assert first["details"]["input"] == "Weather in Paris?" and first["details"]["output"] is None
            assert first["details"]["model"] == "gpt-4o-2024-08-06"
            assert first["details"]["tokens"] == {"input": 11, "output": 7}
            assert [m["role"] for m in first["details"]["messages"]["input"]] == ["system", "user"]
            [called] = first["details"]["messages"]["output"][0]["tool_calls"]
            assert (called["name"], called["arguments"], called["id"]) == ("get_weather", {"city": "Paris"}, "call_1")
            said = second["details"]["messages"]["input"]
            assert [m["role"] for m in said] == ["system", "user", "assistant", "tool"]
            assert json.loads(said[3]["tool_result"]) == {"city": "Paris", "sky": "sunny", "celsius": 21}
            assert second["details"]["output"] == ANSWER and second["details"]["tokens"] == {"input": 40, "output": 12}

            traces = {r["traceId"]: r for r in _results(api, runs, 2)}
            assert traces[bare]["status"] == "not_applicable"
            assert traces[captured]["status"] == "passed"
            assert (traces[captured]["details"]["input"], traces[captured]["details"]["output"]) == \
                ("Weather in Paris?", ANSWER)

        database = Database(db_url)
        try:
            with database.session() as session:
                spans = session.query(OnlineSpan).filter(OnlineSpan.trace_id == captured).all()
        finally:
            database.dispose()
        assert sorted(s.name for s in spans) == ["chat gpt-4o", "chat gpt-4o", "invoke_agent weather"]
        sample = group_sample(captured, spans)
        assert sample is not None
        assert [e.type for e in sample.transcript] == ["user_message", "tool_call", "token_usage",
                                                       "assistant_message", "token_usage"]
        assert sample.metadata["tokens"] == {"input": 51, "output": 19}
        spec = {"type": "tool_calls", "config": {"required": [{"name": "get_weather", "arguments": {"city": "Paris"}}],
                                                 "forbidden": ["delete_account"]}}
        assert library.grade(spec, sample).status == "passed"
    finally:
        model.stop()
        server.stop()
