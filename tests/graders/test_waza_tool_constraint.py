"""waza's tool_constraint grader (internal/graders/tool_constraint_grader.go): regex specs on calls."""

import pytest

from assay.core.errors import SpecError

TRANSCRIPT = [
    {"type": "tool.execution_start", "tool_name": "bash", "tool_call_id": "1",
     "arguments": {"command": "az webapp deploy --name app"}},
    {"type": "tool.execution_start", "tool_name": "view", "tool_call_id": "2", "arguments": {"path": "src/Main.py"}},
    {"type": "tool.execution_start", "tool_name": "skill", "tool_call_id": "3", "arguments": {"skill": "azure-deploy"}},
]


@pytest.mark.parametrize("config, passed, score", [
    ({"expect_tools": [{"tool": "bash"}]}, True, 1.0),
    ({"expect_tools": [{"tool": "BASH"}]}, True, 1.0),                                    # case-insensitive
    ({"expect_tools": [{"tool": "ba"}]}, True, 1.0),                                      # searched, not anchored
    ({"expect_tools": [{"tool": "^ba$"}]}, False, 0.0),
    ({"expect_tools": [{"tool": "bash", "command_pattern": "AZ WEBAPP"}]}, True, 1.0),
    ({"expect_tools": [{"tool": "bash", "command_pattern": "kubectl"}]}, False, 0.0),
    ({"expect_tools": [{"tool": "view", "path_pattern": r"main\.py$"}]}, True, 1.0),
    ({"expect_tools": [{"tool": "skill", "skill_pattern": "^azure-"}]}, True, 1.0),
    ({"expect_tools": [{"tool": "view", "command_pattern": "."}]}, False, 0.0),           # view has no command
    ({"reject_tools": [{"tool": "bash", "command_pattern": "rm -rf"}]}, True, 1.0),
    ({"reject_tools": [{"tool": "edit|create"}, {"tool": "bash"}]}, False, 0.5),
    ({"expect_tools": [{"tool": "edit"}], "reject_tools": [{"tool": "rm"}]}, False, 0.5),
])
def test_tool_constraint(grade, config, passed, score):
    r = grade({"type": "waza_tool_constraint", "config": config}, output="", transcript=TRANSCRIPT)
    assert (r.passed, r.score) == (passed, pytest.approx(score))


def test_reason_describes_spec(grade):
    r = grade({"type": "waza_tool_constraint",
               "config": {"reject_tools": [{"tool": "bash", "command_pattern": "deploy"}]}},
              output="", transcript=TRANSCRIPT)
    assert r.reason == "Rejected tool was used: bash (command_pattern: deploy)"


@pytest.mark.parametrize("config, message", [
    ({}, "at least one of"),
    ({"expect_tools": [{"tool": "  "}]}, "non-empty"),
    ({"reject_tools": [{"tool": "a", "path_pattern": "("}]}, "path_pattern"),
])
def test_bad_config(grade, config, message):
    with pytest.raises(SpecError, match=message):
        grade({"type": "waza_tool_constraint", "config": config}, output="")
