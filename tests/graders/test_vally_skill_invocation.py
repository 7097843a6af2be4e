"""vally_skill_invocation: Vally's skill-invocation
(microsoft.github.io/vally/reference/graders/skill-invocation/)."""

import pytest

from assay.core.errors import SpecError
from assay.core.spec import compile_spec


@pytest.mark.parametrize("config, skills, passed, reason", [
    ({"required": ["code-review"]}, ["code-review"], True, "as required"),
    ({"required": ["code-review", "summarization"]}, ["code-review"], False, "not activated: summarization"),
    ({"required": ["code-review"]}, ["Code-Review"], False, "not activated"),           # exact names
    ({"required": ["code"]}, ["code-review"], False, "not activated"),                  # no patterns
    ({"disallowed": ["web-search"]}, ["code-review"], True, "as required"),
    ({"disallowed": ["web-search"]}, ["web-search", "web-search"], False, "disallowed skill(s) activated"),
    ({"required": ["summarization"], "disallowed": ["web-search"]}, [], False, "not activated"),
])
def test_skills(grade, config, skills, passed, reason):
    r = grade({"type": "vally_skill_invocation", "config": config}, output="x", metadata={"skills": skills})
    assert r.passed is passed and reason in r.reason, r.reason


def test_skill_tool_calls_without_recorded_activations(grade):
    calls = [{"type": "tool_call", "name": "skill", "arguments": {"skill": "code-review"}}]
    r = grade({"type": "vally_skill_invocation", "config": {"required": ["code-review"]}}, output="x",
              transcript=calls)
    assert r.passed, r.reason


@pytest.mark.parametrize("config, message", [
    ({}, "required or disallowed"),
    ({"required": ["a"], "disallowed": ["a"]}, "both required and disallowed: a"),
    ({"required": "a"}, "required"),
])
def test_bad_configs(config, message):
    with pytest.raises(SpecError, match=message):
        compile_spec({"type": "vally_skill_invocation", "config": config})
