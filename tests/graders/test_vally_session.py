"""vally_session: Vally's completed (strict) and exit-success (output only)
(microsoft.github.io/vally/reference/graders/completed/)."""

import pytest

MESSAGE = {"type": "assistant_message", "content": "done"}
ERROR = {"type": "error", "message": "boom"}


@pytest.mark.parametrize("mode, sample, passed, reason", [
    ("exit-success", {"output": "done"}, True, "completed successfully"),
    ("exit-success", {"output": "   "}, False, "no output"),
    ("exit-success", {"output": "done", "transcript": [ERROR]}, True, "completed"),   # errors not checked
    ("completed", {"output": "done", "transcript": [MESSAGE]}, True, "completed successfully"),
    ("completed", {"output": "", "transcript": [MESSAGE]}, False, "no output"),
    ("completed", {"output": "done", "transcript": [MESSAGE, ERROR, ERROR]}, False, "2 error event(s)"),
    ("completed", {"output": "done"}, False, "no completed turn"),
    ("completed", {"output": "done", "outcome": {"turns": 2}}, True, "completed"),
    ("completed", {"output": "done", "metadata": {"metrics": {"turnCount": 0}}, "transcript": [MESSAGE]},
     False, "no completed turn"),
])
def test_session(grade, mode, sample, passed, reason):
    r = grade({"type": "vally_session", "config": {"mode": mode}}, **sample)
    assert r.passed is passed and reason in r.reason, r.reason


def test_vally_events_count(grade):
    events = [{"type": "assistant.message", "data": {"content": "hi"}}]
    r = grade({"type": "vally_session", "config": {}}, output="hi", transcript=events)
    assert r.passed, r.reason
