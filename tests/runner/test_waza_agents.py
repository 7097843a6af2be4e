"""A custom agent's declared tools become waza's implicit allow-list grader
(runner/suites/dialects/_waza_agents.py; agent_graders.go at a3f8e060, custom-agents.mdx):
added from 0.31 unless the eval has its own tool_constraint grader, exact names, `tools: []`
denies all, no `tools:` key adds nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.core.context import SpecContext
from assay.runner.execute import grade_one
from assay.runner.resources import default_resources
from assay.runner.suites import load_suite

EVAL = "name: e\nskill: security-reviewer\ntasks: [tasks/*.yaml]\ngraders:\n  - {type: text, name: sev, config: {contains: [severity]}}\n"
TASK = ("id: t1\nname: T\ninputs:\n  prompt: review\n  output: High severity\n  transcript:\n"
        "    - {type: tool_call, name: codeSearch}\n    - {type: tool_call, name: fileWrite}\n")
AGENT = "---\nname: security-reviewer\ndescription: Reviews code.\ntools:\n{tools}---\n\n# Security reviewer\n"


def suite(tmp: Path, tools: str | None, eval_text: str = EVAL, version: str | None = None, where: str = "."):
    (tmp / "tasks").mkdir(exist_ok=True)
    (tmp / "eval.yaml").write_text(eval_text)
    (tmp / "tasks" / "a.yaml").write_text(TASK)
    if tools is not None:
        (tmp / where).mkdir(exist_ok=True)
        text = AGENT.format(tools=tools) if tools != "absent" else "---\nname: x\n---\nbody\n"
        (tmp / where / "security-reviewer.agent.md").write_text(text)
    return load_suite(tmp / "eval.yaml", context=SpecContext(), waza_version=version)


def implicit(s):
    found = [g for g in s.graders if g.name == "agent_tools_implicit"]
    if not found:
        return None
    return grade_one(found[0].build(default_resources()), s.samples[0])


@pytest.mark.parametrize("where", [".", "agents"])
def test_declared_tools_are_an_allow_list(tmp_path, where):
    got = implicit(suite(tmp_path, "  - codeSearch\n  - fileRead\n", where=where))
    assert got is not None and not got.passed and "Undeclared tool used: fileWrite" in got.reason
    assert got.details["allow_only_violations"] == ["fileWrite"]


def test_no_agent_file_adds_nothing(tmp_path):
    assert implicit(suite(tmp_path, None)) is None


def test_an_empty_tools_list_denies_every_tool(tmp_path):
    (tmp_path / "security-reviewer.agent.md").write_text("---\nname: s\ntools: []\n---\nbody\n")
    got = implicit(suite(tmp_path, None))
    assert got is not None and not got.passed and got.score == 0.0


def test_no_tools_key_and_an_own_tool_constraint_add_nothing(tmp_path):
    assert implicit(suite(tmp_path, "absent")) is None
    own = EVAL + "  - {type: tool_constraint, name: mine, config: {reject_tools: [{tool: rm}]}}\n"
    assert implicit(suite(tmp_path, "  - codeSearch\n", eval_text=own)) is None


def test_only_from_0_31_and_not_beside_a_skill_md(tmp_path):
    assert implicit(suite(tmp_path, "  - codeSearch\n", version="0.30")) is None
    (tmp_path / "SKILL.md").write_text("---\nname: s\ndescription: d\n---\n")
    assert implicit(suite(tmp_path, "  - codeSearch\n")) is None


def test_an_unreadable_front_matter_adds_nothing_with_a_warning(tmp_path):
    (tmp_path / "security-reviewer.agent.md").write_text("---\nname: s\ntools: [a\n---\nbody\n")
    s = suite(tmp_path, None)
    assert implicit(s) is None and any("cannot read its front matter" in w for w in s.warnings)
