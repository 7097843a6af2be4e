"""OpenAIJudgeClient against a real OpenAI-compatible HTTP server on 127.0.0.1."""

from __future__ import annotations

import json
import logging
import socket
import threading

import pytest
from judge_server import (
    Behaviour,
    JudgeServer,
    completion,
    empty,
    good,
    good_json,
    malformed,
    refusal,
    rejects_response_format,
    slow,
    status,
)
from judge_testkit import KEY, SCHEMA, ask

from assay.core.result import ErrorCode
from assay.judges import OpenAIJudgeClient, Price
from assay.settings import Settings


def test_structured_reply_is_parsed_and_counted(judge_server, make_client):
    judge_server.queue(good_json({"score": 4}, prompt_tokens=120, completion_tokens=30))
    reply = make_client().judge(ask(schema=SCHEMA, max_tokens=50, seed=7))
    assert reply.ok and reply.text == '{"score": 4}' and reply.parsed == {"score": 4}
    assert reply.usage == {"prompt_tokens": 120, "completion_tokens": 30}
    assert reply.attempts == 1 and not reply.cached and reply.model == "judge-test"
    sent = judge_server.requests[0]
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    assert sent.body["response_format"] == {"type": "json_schema", "json_schema": {
        "name": "verdict", "schema": SCHEMA["schema"], "strict": True}}
    assert sent.body["model"] == "judge-test" and sent.body["max_tokens"] == 50 and sent.body["seed"] == 7
    assert [m["role"] for m in sent.body["messages"]] == ["system", "user"]


def test_without_schema_no_response_format_and_nothing_parsed(judge_server, make_client):
    judge_server.queue(good('{"score": 2}'))
    reply = make_client().judge(ask())
    assert reply.ok and reply.text == '{"score": 2}' and reply.parsed is None
    assert "response_format" not in judge_server.requests[0].body


def test_malformed_json_keeps_text_and_leaves_parsing_to_the_grader(judge_server, make_client):
    judge_server.queue(malformed())
    reply = make_client().judge(ask(schema=SCHEMA))
    assert reply.ok and reply.parsed is None and reply.text.startswith('{"score": 5')


def test_tool_call_arguments_are_the_text(judge_server, make_client):
    judge_server.queue(Behaviour(body=completion(None, tool_arguments='{"score": 3}')))
    reply = make_client().judge(ask(schema=SCHEMA))
    assert reply.ok and reply.parsed == {"score": 3}


def test_refusal_is_unavailable_with_its_text(judge_server, make_client):
    judge_server.queue(refusal("I cannot grade this content."))
    reply = make_client().judge(ask(schema=SCHEMA))
    assert reply.error is ErrorCode.UNAVAILABLE and reply.text is None and reply.parsed is None
    assert reply.message == "the judge refused: I cannot grade this content."


@pytest.mark.parametrize("behaviour", [empty(), good("   \n"), Behaviour(body={**completion(None), "choices": []})])
def test_empty_reply_is_unavailable(judge_server, make_client, behaviour):
    judge_server.queue(behaviour)
    reply = make_client().judge(ask())
    assert reply.error is ErrorCode.UNAVAILABLE and reply.message == "the judge returned an empty reply"


def test_429_honours_retry_after_then_succeeds(judge_server, make_client):
    judge_server.queue(status(429, retry_after="0.6"), good_json({"score": 5}))
    reply = make_client(backoff_s=0.001).judge(ask())
    assert reply.ok and reply.attempts == 2 and len(judge_server.requests) == 2
    gap = judge_server.requests[1].at - judge_server.requests[0].at
    assert gap >= 0.55  # the backoff alone would have waited about 1 ms


def test_500_then_success_is_retried(judge_server, make_client):
    judge_server.queue(status(500), status(502), good_json({"score": 1}))
    reply = make_client().judge(ask())
    assert reply.ok and reply.attempts == 3 and reply.text == '{"score": 1}'


def test_retries_exhausted_names_the_last_status(judge_server, make_client):
    judge_server.default = status(503)
    reply = make_client(max_retries=2).judge(ask())
    assert reply.error is ErrorCode.UNAVAILABLE and reply.attempts == 3 and len(judge_server.requests) == 3
    assert "after 3 attempts" in reply.message and "HTTP 503" in reply.message


def test_retry_after_beyond_the_cap_gives_up_at_once(judge_server, make_client):
    judge_server.queue(status(429, retry_after="3600"))
    reply = make_client().judge(ask())
    assert reply.error is ErrorCode.UNAVAILABLE and "3600" in reply.message and len(judge_server.requests) == 1


def test_slow_reply_times_out_and_is_not_retried(judge_server, make_client):
    judge_server.queue(slow(5))
    reply = make_client().judge(ask(timeout_s=0.3))
    assert reply.error is ErrorCode.TIMEOUT and "0.3 s" in reply.message
    assert len(judge_server.requests) == 1 and reply.attempts == 1


def test_default_timeout_comes_from_the_client(judge_server, make_client):
    judge_server.queue(slow(5))
    reply = make_client(timeout_s=0.3).judge(ask())  # the request keeps JudgeRequest's default
    assert reply.error is ErrorCode.TIMEOUT


def test_endpoint_rejecting_response_format_is_asked_again_without_it_and_remembered(judge_server, make_client):
    judge_server.default = rejects_response_format(good_json({"score": 4}))
    client = make_client()
    first = client.judge(ask(schema=SCHEMA))
    assert first.ok and first.parsed == {"score": 4} and first.attempts == 2
    assert "response_format" in judge_server.requests[0].body
    assert "response_format" not in judge_server.requests[1].body
    second = client.judge(ask(schema=SCHEMA))
    assert second.ok and second.attempts == 1 and len(judge_server.requests) == 3
    assert "response_format" not in judge_server.requests[2].body


@pytest.mark.parametrize(("code", "words"), [(401, "refused the key"), (403, "refused the key"),
                                             (404, "no model 'judge-test'")])
def test_auth_and_not_found_are_unavailable_without_retry(judge_server, make_client, code, words):
    judge_server.queue(status(code, message=f"Incorrect API key provided: {KEY}"))
    reply = make_client().judge(ask())
    assert reply.error is ErrorCode.UNAVAILABLE and words in reply.message and f"HTTP {code}" in reply.message
    assert len(judge_server.requests) == 1
    assert KEY not in reply.message and "[redacted]" in reply.message
    assert reply.message.code == ("judge.call.no_model_there" if code == 404 else "judge.call.key_wrong")
    assert KEY not in str(reply.message.args) and reply.message.args.get("status", 404) == code  # values scrubbed too


def test_no_key_configured_says_how_to_set_one(judge_server, make_client):
    judge_server.queue(status(401))
    reply = make_client(api_key=None).judge(ask())
    assert "set ASSAY_JUDGE_API_KEY or OPENAI_API_KEY" in reply.message and reply.message.code == "judge.call.key_unset"


def test_connection_refused_is_retried_then_unavailable(make_client):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed when the block ends: nothing listens there
    reply = make_client(base_url=f"http://127.0.0.1:{port}/v1", max_retries=1).judge(ask())
    assert reply.error is ErrorCode.UNAVAILABLE and reply.attempts == 2 and "connection error" in reply.message
    assert reply.message.code == "judge.call.gave_up"
    assert reply.message.args["last"]["code"] == "judge.call.last_connection"


def test_no_model_is_invalid_config_and_sends_nothing(judge_server, make_client):
    reply = make_client(model=None).judge(ask())
    assert reply.error is ErrorCode.INVALID_CONFIG
    assert reply.message == "no judge model: set config.model or ASSAY_JUDGE_MODEL"
    assert reply.message.code == "judge.call.no_model"
    assert judge_server.requests == []


def test_request_overrides_model_base_url_and_key(judge_server, make_client):
    other_key = "sk-other-91b2c3d4e5f6"
    with JudgeServer() as other:
        client = make_client(environ={"TEAM_KEY": other_key})
        reply = client.judge(ask(model="big-judge", base_url=other.url, api_key_env="TEAM_KEY"))
        assert reply.ok and judge_server.requests == []
        assert other.requests[0].body["model"] == "big-judge"
        assert other.requests[0].headers["authorization"] == f"Bearer {other_key}"
    missing = client.judge(ask(api_key_env="NOT_SET"))
    assert missing.error is ErrorCode.INVALID_CONFIG and "NOT_SET" in missing.message


def test_keys_never_appear_in_replies_or_logs(judge_server, make_client, caplog):
    env_key = "sk-env-5e6f7a8b9c0d1e2f"
    leak = f"key {KEY} and {env_key} rejected"
    judge_server.respond = lambda body: status(int(body["messages"][1]["content"]), message=leak)
    client = make_client(environ={"JUDGE_KEY": env_key}, max_retries=1)
    with caplog.at_level(logging.DEBUG):
        replies = client.judge_many([ask(code) for code in ("400", "401", "404", "422", "500", "429")] +
                                    [ask("401", api_key_env="JUDGE_KEY")])
        judge_server.respond = lambda body: refusal(leak)
        replies.append(client.judge(ask()))
    assert all(not r.ok for r in replies)
    assert any("[redacted]" in r.message for r in replies)
    for reply in replies:
        assert KEY not in repr(reply) and env_key not in repr(reply)
    for record in caplog.records:
        text = record.getMessage()
        assert KEY not in text and env_key not in text, record.name


def test_concurrency_limit_holds_across_threads(judge_server, make_client):
    judge_server.default = slow(0.15)
    client = make_client(concurrency=3)
    out: list = []
    threads = [threading.Thread(target=lambda: out.extend(client.judge_many([ask() for _ in range(6)])))
               for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=30)
    assert len(out) == 18 and all(r.ok for r in out)
    assert judge_server.max_in_flight == 3


def test_judge_many_keeps_request_order(judge_server, make_client):
    def echo(body):
        text = body["messages"][1]["content"]
        return slow(0.3 if text == "0" else 0, good_json({"echo": text}))  # the first finishes last

    judge_server.respond = echo
    replies = make_client().judge_many([ask(str(i), schema=SCHEMA) for i in range(8)])
    assert [r.parsed["echo"] for r in replies] == [str(i) for i in range(8)]


def test_cost_from_the_price_table(judge_server, make_client):
    prices = {"judge-test": Price(input=1.0, output=4.0)}
    judge_server.queue(good("ok", prompt_tokens=1000, completion_tokens=500), good("ok", model="unpriced"))
    client = make_client(prices=prices)
    assert client.judge(ask()).cost_usd == pytest.approx((1000 * 1.0 + 500 * 4.0) / 1e6)
    assert client.judge(ask(model="unpriced")).cost_usd is None


def test_from_settings(judge_server, tmp_path):
    prices = tmp_path / "prices.json"
    prices.write_text(json.dumps({"judge-test": {"input": 2, "output": 2}}))
    settings = Settings.from_env({"OPENAI_BASE_URL": judge_server.url, "OPENAI_API_KEY": KEY,
                                  "ASSAY_JUDGE_MODEL": "judge-test", "ASSAY_JUDGE_CACHE": "off",
                                  "ASSAY_JUDGE_PRICES": str(prices), "ASSAY_JUDGE_CONCURRENCY": "2"})
    client = OpenAIJudgeClient.from_settings(settings)
    try:
        reply = client.judge(ask())
        assert reply.ok and reply.cost_usd == pytest.approx((11 + 7) * 2 / 1e6)
        assert client.concurrency == 2 and client.cache is None
        assert judge_server.requests[0].headers["authorization"] == f"Bearer {KEY}"
    finally:
        client.close()


def test_a_closed_client_answers_unavailable(judge_server, make_client):
    client = make_client()
    client.close()
    client.close()
    reply = client.judge(ask())
    assert reply.error is ErrorCode.UNAVAILABLE and reply.message == "the judge client is closed"


def test_closing_while_calls_are_in_flight_answers_them(judge_server, make_client):
    judge_server.default = slow(5)
    client = make_client()
    out: list = []
    worker = threading.Thread(target=lambda: out.extend(client.judge_many([ask(), ask()])))
    worker.start()
    for _ in range(500):
        if judge_server.in_flight == 2:
            break
        threading.Event().wait(0.01)
    client.close()
    worker.join(timeout=10)
    assert [r.message for r in out] == ["the judge client is closed"] * 2
