"""waza's skill_invocation grader (internal/graders/skill_invocation_grader.go): modes, F1, allow_extra."""

import pytest

from assay.core.errors import SpecError


def skill_calls(*names):
    return [{"type": "tool.execution_start", "tool_name": "skill", "tool_call_id": str(i), "arguments": {"skill": n}}
            for i, n in enumerate(names)]


@pytest.mark.parametrize("config, actual, passed, score", [
    ({"mode": "exact_match"}, ["plan", "deploy"], True, 1.0),
    ({"mode": "exact_match"}, ["deploy", "plan"], False, 1.0),
    ({"mode": "in_order"}, ["plan", "lint", "deploy"], True, 0.8),
    ({"mode": "in_order", "allow_extra": False}, ["plan", "lint", "deploy"], True, 0.64),   # 0.8 × (1 − 0.6/3)
    ({"mode": "any_order"}, ["deploy", "plan"], True, 1.0),
    ({"mode": "any_order", "allow_extra": False}, ["deploy", "x", "y"], False, 0.4 * (1 - 0.6 / 3)),  # F1 0.4
    ({"mode": "in_order"}, [], False, 0.0),
])
def test_skill_invocation(grade, config, actual, passed, score):
    r = grade({"type": "waza_skill_invocation", "config": {"required_skills": ["plan", "deploy"], **config}},
              output="", transcript=skill_calls(*actual))
    assert (r.passed, r.score) == (passed, pytest.approx(score))
    assert r.details["actual_skills"] == list(actual)


def test_invocations_given_in_metadata(grade):
    r = grade({"type": "waza_skill_invocation", "config": {"required_skills": ["plan"], "mode": "exact_match"}},
              output="", metadata={"skill_invocations": [{"name": "plan", "path": "skills/plan/SKILL.md"}]})
    assert r.passed and r.reason == "Skill invocation sequence matched"


def test_extra_reason(grade):
    r = grade({"type": "waza_skill_invocation",
               "config": {"required_skills": ["plan"], "mode": "in_order", "allow_extra": False}},
              output="", transcript=skill_calls("plan", "x"))
    assert r.passed and r.reason == "Skill invocation sequence matched but had extra invocations (got 2, expected 1)"


@pytest.mark.parametrize("config, message", [
    ({"required_skills": ["a"]}, "mode"),
    ({"required_skills": ["a"], "mode": "in_order_match"}, "mode"),
    ({"required_skills": [], "mode": "in_order"}, "required_skills"),
])
def test_bad_config(grade, config, message):
    with pytest.raises(SpecError, match=message):
        grade({"type": "waza_skill_invocation", "config": config}, output="")
