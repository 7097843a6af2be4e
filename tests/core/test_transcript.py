"""parse_transcript: assay, Vally and waza shapes in; Vally and waza shapes out."""

from __future__ import annotations

import pytest

from assay.core.transcript import TranscriptError, parse_transcript, to_vally_events, to_waza_transcript

CALL = {"type": "tool_call", "name": "bash", "call_id": "c1", "arguments": {"command": "ls"}}


@pytest.mark.parametrize("entry, expected", [
    (CALL, CALL),
    ({"type": "tool_call", "timestamp": "t", "data": {"toolName": "bash", "toolCallId": "c1", "arguments": {"command": "ls"}}},
     {**CALL, "timestamp": "t"}),
    ({"type": "tool_call", "toolName": "bash", "toolCallId": "c1", "arguments": '{"command": "ls"}'}, CALL),
    ({"type": "tool.execution_start", "data": {"toolName": "bash", "toolCallId": "c1", "arguments": {"command": "ls"}}}, CALL),
    ({"type": "tool_call", "tool": "bash", "args": {"command": "ls"}}, {"type": "tool_call", "name": "bash", "arguments": {"command": "ls"}}),
    ({"role": "tool", "name": "bash", "content": "ls"}, {"type": "tool_call", "name": "bash", "content": "ls"}),
    ({"type": "tool_result", "data": {"toolCallId": "c1", "success": False, "result": "denied"}},
     {"type": "tool_result", "call_id": "c1", "success": False, "result": "denied"}),
    ({"type": "tool.execution_complete", "data": {"toolCallId": "c1", "isError": True}},
     {"type": "tool_result", "call_id": "c1", "success": False}),
    ({"type": "assistant.message", "data": {"content": "hi"}}, {"type": "assistant_message", "content": "hi"}),
    ({"type": "assistant_message", "data": {"content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]}},
     {"type": "assistant_message", "content": "ab"}),
    ({"role": "assistant", "content": "hi"}, {"type": "assistant_message", "content": "hi"}),
    ({"type": "message", "role": "user", "content": "q"}, {"type": "user_message", "content": "q"}),
    ({"type": "response", "content": "r"}, {"type": "assistant_message", "content": "r"}),
    ({"type": "session.error", "data": {"message": "boom"}}, {"type": "error", "message": "boom"}),
    ({"type": "usage", "data": {"inputTokens": 5, "outputTokens": 7}},
     {"type": "token_usage", "input_tokens": 5, "output_tokens": 7}),
])
def test_entries(entry, expected):
    [event] = parse_transcript([entry])
    assert event.model_dump(exclude_none=True) == expected


def test_unknown_types_skipped_and_result_names_filled():
    events = parse_transcript({"events": [{"type": "session.idle", "data": {}}, {"role": "system", "content": "x"},
                                          CALL, {"type": "tool_result", "toolCallId": "c1", "success": True}]})
    assert [e.type for e in events] == ["tool_call", "tool_result"]
    assert events[1].name == "bash"


@pytest.mark.parametrize("raw, message", [
    ("text", "must be a list"),
    ([1], r"transcript\[0\]: an event must be a mapping"),
    ([CALL, {"type": "tool_call", "arguments": {"a": 1}, "input_tokens": "x"}], r"transcript\[1\]"),
    ({"nothing": []}, "'events' or 'transcript'"),
])
def test_errors(raw, message):
    with pytest.raises(TranscriptError, match=message):
        parse_transcript(raw)


def test_round_trip_through_vally_shape():
    events = parse_transcript([CALL, {"type": "tool_result", "call_id": "c1", "success": True, "result": "ok"},
                               {"type": "error", "message": "m"}])
    assert parse_transcript(to_vally_events(events)) == events


def test_waza_shape_has_role_and_legacy_keys():
    [call, msg] = to_waza_transcript(parse_transcript([CALL, {"type": "assistant_message", "content": "hi"}]))
    assert call["role"] == "tool" and call["tool"] == "bash" and call["args"] == {"command": "ls"}
    assert msg == {"type": "assistant_message", "content": "hi", "role": "assistant"}
