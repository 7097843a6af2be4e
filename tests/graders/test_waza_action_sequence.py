"""waza's action_sequence grader (internal/graders/action_sequence_grader.go): modes and F1."""

import pytest

from assay.core.errors import SpecError


def calls(*names):
    return [{"type": "tool.execution_start", "tool_name": n, "tool_call_id": str(i), "arguments": {}}
            for i, n in enumerate(names)]


@pytest.mark.parametrize("mode, expected, actual, passed, score", [
    ("exact_match", ["view", "edit"], ["view", "edit"], True, 1.0),
    ("exact_match", ["view", "edit"], ["edit", "view"], False, 1.0),          # same calls, wrong order
    ("exact_match", ["view", "edit"], ["view", "edit", "bash"], False, 0.8),  # p=2/3 r=1
    ("in_order_match", ["view", "edit"], ["view", "bash", "edit"], True, 0.8),
    ("in_order_match", ["view", "edit"], ["edit", "view"], False, 1.0),
    ("any_order_match", ["edit", "view"], ["view", "bash", "edit"], True, 0.8),
    ("any_order_match", ["edit", "edit"], ["edit", "view"], False, 0.5),      # frequency counts
    ("any_order_match", ["edit"], [], False, 0.0),
])
def test_action_sequence(grade, mode, expected, actual, passed, score):
    r = grade({"type": "waza_action_sequence", "config": {"matching_mode": mode, "expected_actions": expected}},
              output="", transcript=calls(*actual))
    assert (r.passed, r.score) == (passed, pytest.approx(score))
    assert r.details["actual_actions"] == list(actual)


def test_failure_reason_names_missing(grade):
    r = grade({"type": "waza_action_sequence",
               "config": {"matching_mode": "any_order_match", "expected_actions": ["edit", "edit"]}},
              output="", transcript=calls("edit"))
    assert r.reason == "Any-order match failed: missing or insufficient actions: edit (need 2, got 1)"


@pytest.mark.parametrize("config, message", [
    ({"expected_actions": ["a"]}, "matching_mode"),                                   # required, no default
    ({"matching_mode": "in_order", "expected_actions": ["a"]}, "matching_mode"),      # skill_invocation's word
    ({"matching_mode": "exact_match", "expected_actions": []}, "expected_actions"),
])
def test_bad_config(grade, config, message):
    with pytest.raises(SpecError, match=message):
        grade({"type": "waza_action_sequence", "config": config}, output="")
