"""service.online.mapping and messages: what a span means as a sample, in each convention a
real instrumentation writes, and a trace's transcript graded by the existing tool-call grader."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pytest

import assay
from assay.service.online.mapping import group_sample, span_sample


@dataclass
class Stored:
    trace_id: str = "ab" * 16
    span_id: str = "01" * 8
    parent_span_id: str | None = None
    name: str = "chat gpt-4o"
    start_ns: int = 1_000_000_000
    end_ns: int = 1_250_000_000
    status_code: int = 0
    status_message: str | None = None
    attributes: dict[str, Any] = field(default_factory=dict)
    events: list[dict[str, Any]] = field(default_factory=list)


CURRENT = {
    "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o", "gen_ai.response.model": "gpt-4o-2024-08-06",
    "gen_ai.usage.input_tokens": 20, "gen_ai.usage.output_tokens": 7,
    "gen_ai.system_instructions": json.dumps([{"type": "text", "content": "Answer briefly."}]),
    "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [{"type": "text", "content": "Weather in Rome?"}]}]),
    "gen_ai.output.messages": json.dumps([{"role": "assistant", "finish_reason": "tool_call", "parts": [
        {"type": "text", "content": "Let me look."},
        {"type": "tool_call", "id": "call_1", "name": "get_weather", "arguments": {"city": "Rome"}}]}]),
}
EVENTS = [
    {"name": "gen_ai.system.message", "attributes": {"content": "Answer briefly."}},
    {"name": "gen_ai.user.message", "attributes": {"content": "Weather in Rome?"}},
    {"name": "gen_ai.choice", "attributes": {"index": 0, "finish_reason": "tool_calls", "message": json.dumps(
        {"content": "Let me look.", "tool_calls": [{"id": "call_1", "type": "function",
                                                    "function": {"name": "get_weather",
                                                                 "arguments": '{"city": "Rome"}'}}]})}},
]
OPENINFERENCE = {
    "openinference.span.kind": "LLM", "llm.model_name": "gpt-4o", "llm.token_count.prompt": 20,
    "llm.token_count.completion": 7, "llm.input_messages.0.message.role": "system",
    "llm.input_messages.0.message.content": "Answer briefly.", "llm.input_messages.1.message.role": "user",
    "llm.input_messages.1.message.content": "Weather in Rome?", "llm.output_messages.0.message.role": "assistant",
    "llm.output_messages.0.message.content": "Let me look.",
    "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "get_weather",
    "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": '{"city": "Rome"}',
    "llm.output_messages.0.message.tool_calls.0.tool_call.id": "call_1",
}


@pytest.mark.parametrize("attributes, events, tokens", [
    (CURRENT, [], {"input": 20, "output": 7}),
    ({"gen_ai.operation.name": "chat"}, EVENTS, {"input": None, "output": None}),
    (OPENINFERENCE, [], {"input": 20, "output": 7})], ids=["current", "events", "openinference"])
def test_each_convention_gives_the_same_sample(attributes, events, tokens):
    sample = span_sample(Stored(attributes=attributes, events=events))
    assert sample is not None
    assert (sample.id, sample.input, sample.output, sample.expected) == ("ab" * 16 + ":" + "01" * 8,
                                                                        "Weather in Rome?", "Let me look.", None)
    assert [(c.name, c.arguments, c.call_id) for c in sample.tool_calls] == [("get_weather", {"city": "Rome"},
                                                                               "call_1")]
    assert sample.duration_ms == 250.0
    messages = sample.metadata["messages"]["input"]
    assert [m["role"] for m in messages] == ["system", "user"] and messages[0]["content"] == "Answer briefly."
    assert sample.metadata["tokens"] == tokens


def test_openllmetry_flattened_attributes():
    sample = span_sample(Stored(attributes={"gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": "hi",
                                            "gen_ai.completion.0.role": "assistant",
                                            "gen_ai.completion.0.content": "hello"}))
    assert sample is not None and (sample.input, sample.output) == ("hi", "hello")


def test_a_span_without_content_is_not_applicable():
    bare = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o", "gen_ai.usage.input_tokens": 3}
    assert span_sample(Stored(attributes=bare)) is None
    assert group_sample("t", [Stored(attributes=bare), Stored(span_id="02" * 8, attributes={"http.method": "GET"})]) \
        is None


def test_a_trace_has_a_transcript_the_tool_call_grader_grades():
    root = Stored(span_id="00" * 8, name="invoke_agent", attributes={"gen_ai.operation.name": "invoke_agent"},
                  start_ns=0, end_ns=5_000_000_000)
    first = Stored(parent_span_id="00" * 8, attributes=CURRENT, start_ns=1, end_ns=2)
    tool = Stored(span_id="02" * 8, parent_span_id="00" * 8, name="execute_tool get_weather", start_ns=3, end_ns=4,
                  attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather",
                              "gen_ai.tool.call.id": "call_1", "gen_ai.tool.call.arguments": '{"city": "Rome"}',
                              "gen_ai.tool.call.result": '{"temp": 21}'})
    answer = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o-mini", "gen_ai.usage.input_tokens": 30,
              "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [
                  {"type": "text", "content": "21 degrees in Rome."}]}])}
    last = Stored(span_id="03" * 8, parent_span_id="00" * 8, attributes=answer, start_ns=5, end_ns=6)
    sample = group_sample("ab" * 16, [last, tool, root, first])
    assert sample is not None
    assert [e.type for e in sample.transcript] == ["user_message", "assistant_message", "tool_call", "token_usage",
                                                   "tool_result", "assistant_message", "token_usage"]
    assert (sample.input, sample.output, sample.metadata["model"]) == ("Weather in Rome?", "21 degrees in Rome.",
                                                                      "gpt-4o-mini")
    assert sample.metadata["tokens"] == {"input": 50, "output": 7}
    assert sample.metadata["spanId"] == "00" * 8 and sample.duration_ms == 5000.0
    spec = {"type": "tool_calls", "config": {"required": [{"name": "get_weather", "arguments": {"city": "Rome"},
                                                            "result": "temp"}],
                                             "forbidden": ["delete"]}}
    assert assay.grade(spec, sample).status == "passed"
    assert assay.grade({"type": "tool_calls", "config": {"required": ["book_flight"]}}, sample).status == "failed"


def test_a_failed_tool_span_reports_its_failure():
    tool = Stored(attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "charge"}, status_code=2,
                  status_message="card declined")
    sample = span_sample(tool)
    assert sample is not None
    result = sample.transcript[-1]
    assert (result.type, result.success, result.result) == ("tool_result", False, "card declined")
