"""waza's behavior grader (internal/graders/behavior_grader.go): limits on the session digest."""

import pytest

from assay.core.errors import SpecError

# A waza transcript (TranscriptEvent JSON): three tool calls, 120 tokens.
TRANSCRIPT = [
    {"type": "user.message", "content": "deploy"},
    {"type": "tool.execution_start", "tool_name": "bash", "tool_call_id": "1", "arguments": {"command": "ls"}},
    {"type": "tool.execution_complete", "tool_call_id": "1", "success": True},
    {"type": "tool.execution_start", "tool_name": "view", "tool_call_id": "2", "arguments": {"path": "a.py"}},
    {"type": "tool.execution_start", "tool_name": "bash", "tool_call_id": "3", "arguments": {"command": "make"}},
    {"type": "tool.execution_start", "tool_name": "report_intent", "tool_call_id": "4"},   # waza drops these
    {"type": "assistant.usage", "input_tokens": 100, "output_tokens": 20},
    {"type": "assistant.message", "content": "done"},
]


@pytest.mark.parametrize("config, passed, score", [
    ({"max_tool_calls": 3}, True, 1.0),
    ({"max_tool_calls": 2}, False, 0.0),
    ({"max_tokens": 120}, True, 1.0),
    ({"max_tokens": 119}, False, 0.0),
    ({"required_tools": ["bash", "edit"]}, False, 0.5),
    ({"required_tools": ["Bash"]}, False, 0.0),                          # names are exact
    ({"forbidden_tools": ["rm", "view"]}, False, 0.5),
    ({"max_duration_ms": 5000}, True, 1.0),
    ({"max_duration_ms": 4999, "max_tool_calls": 10, "required_tools": ["view"]}, False, 2 / 3),
    ({"max_tool_calls": 0, "forbidden_tools": ["edit"]}, True, 1.0),     # 0 is no limit
    ({"max_tool_calls": -1}, True, 1.0),                                 # configured, never checked
])
def test_behavior(grade, config, passed, score):
    r = grade({"type": "waza_behavior", "config": config}, output="done", transcript=TRANSCRIPT, duration_ms=5000)
    assert (r.passed, r.score) == (passed, pytest.approx(score))


def test_no_usage_passes_max_tokens_and_unknown_duration_is_zero(grade):
    r = grade({"type": "waza_behavior", "config": {"max_tokens": 1, "max_duration_ms": 1}}, output="x")
    assert r.passed and r.score == 1.0


def test_session_digest_from_results_wins(grade):
    digest = {"tool_call_count": 7, "tools_used": ["edit"], "usage": {"input_tokens": 5, "output_tokens": 5}}
    r = grade({"type": "waza_behavior", "config": {"max_tool_calls": 5, "required_tools": ["edit"], "max_tokens": 9}},
              output="x", transcript=TRANSCRIPT, metadata={"session_digest": digest})
    assert r.reason == "Tool call count 7 exceeds max allowed 5; Token usage 10 exceeds max allowed 9"
    assert r.score == pytest.approx(1 / 3)


def test_needs_a_rule(grade):
    with pytest.raises(SpecError, match="at least one rule"):
        grade({"type": "waza_behavior", "config": {}}, output="")
