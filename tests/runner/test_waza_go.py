"""A waza eval in the Go edition's shape (eval.yaml with `config`, grader entries `{type, name,
config}`, task files with their own graders) using every Go grader kind assay maps to a
`waza_*` grader, graded end to end. Expected verdicts follow waza's internal/graders/*.go."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from assay.core.aggregate import judge_sample
from assay.core.context import SpecContext
from assay.runner.execute import grade_one
from assay.runner.export_waza import export_waza
from assay.runner.resources import default_resources
from assay.runner.suites import load_suite

EVAL = """\
name: deploy-eval
description: Deploys a web app
skill: azure-deploy
version: "1.0"
config:
  trials_per_task: 2
  timeout_seconds: 300
  parallel: false
  executor: mock
  model: claude-sonnet-4
graders:
  - type: text
    name: mentions_url
    config:
      contains: ["HTTPS://"]
      regex_not_match: ["(?i)error"]
  - type: behavior
    name: efficient
    config:
      max_tool_calls: 5
      max_duration_ms: 60000
      forbidden_tools: [rm]
  - type: tool_constraint
    name: safe
    config:
      reject_tools:
        - tool: bash
          command_pattern: "rm\\\\s+-rf"
tasks:
  - "tasks/*.yaml"
"""

DEPLOY = """\
id: deploy
name: Deploy the app
inputs:
  prompt: Deploy app.py to Azure
graders:
  - type: file
    name: app_kept
    config:
      must_exist: [app.py]
      must_not_exist: [secrets.env]
      content_patterns:
        - path: app.py
          must_match: ["def main"]
  - type: diff
    name: port_set
    config:
      expected_files:
        - path: config.json
          snapshot: config.json
          contains: ["+8080", "-debug"]
  - type: action_sequence
    name: look_then_run
    config:
      matching_mode: in_order_match
      expected_actions: [view, bash]
  - type: skill_invocation
    name: used_skill
    config:
      required_skills: [azure-deploy]
      mode: in_order
"""

REPORT = """\
id: report
inputs:
  prompt: Report the deployment as JSON
graders:
  - type: json_schema
    name: report_shape
    config:
      schema_file: ../schemas/report.json
  - type: text
    name: has_status
    config:
      contains_cs: ['"status"']
"""

SCHEMA = {"type": "object", "required": ["status", "count"],
          "properties": {"status": {"type": "string"}, "count": {"type": "string"}}}


def call(i, tool, **arguments):
    return {"type": "tool.execution_start", "tool_name": tool, "tool_call_id": str(i), "arguments": arguments}


RUNS = [
    {"task_id": "deploy", "output": "Deployed to https://app.azurewebsites.net", "duration_ms": 30000,
     "workspace": "ws", "transcript": [call(1, "view", path="app.py"), call(2, "skill", skill="azure-deploy"),
                                       call(3, "bash", command="az webapp up")]},
    {"task_id": "deploy", "output": "Deployed to https://app.azurewebsites.net", "duration_ms": 30000,
     "workspace": "ws", "transcript": [call(1, "view", path="app.py"), call(2, "bash", command="rm -rf build"),
                                       *[call(i, "bash", command="ls") for i in range(3, 7)]]},
    {"task_id": "report", "output": '{"status": "ok", "count": 3}', "duration_ms": 1000, "transcript": []},
]


@pytest.fixture
def suite(tmp_path: Path):
    files = {"eval.yaml": EVAL, "tasks/deploy.yaml": DEPLOY, "tasks/report.yaml": REPORT,
             "schemas/report.json": json.dumps(SCHEMA), "fixtures/config.json": '{"port": 8080}\n',
             "ws/app.py": textwrap.dedent("def main():\n    pass\n"), "ws/config.json": '{"port": 8080}\n',
             "results.jsonl": "\n".join(json.dumps(r) for r in RUNS) + "\n"}
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return load_suite(tmp_path / "eval.yaml", context=SpecContext())


def test_go_kinds_map_to_waza_graders(suite):
    types = {g.name: g.type for g in suite.graders}
    types.update({g.name: g.type for gs in suite.sample_graders.values() for g in gs})
    assert types == {"mentions_url": "waza_text", "efficient": "waza_behavior", "safe": "waza_tool_constraint",
                     "app_kept": "waza_file", "port_set": "waza_diff", "look_then_run": "waza_action_sequence",
                     "used_skill": "waza_skill_invocation", "report_shape": "json_schema", "has_status": "waza_text"}


def _verdicts(suite):
    out = []
    for s in suite.samples:
        results = [grade_one(spec.build(default_resources()), s) for spec in suite.graders_for(s.id)]
        out.append(judge_sample(s.id, results, threshold=suite.threshold))
    return out


def _table(verdicts):
    return {v.id: (v.passed, {r.name: (r.passed, round(r.score, 4)) for r in v.results}) for v in verdicts}


def test_verdicts_follow_waza(suite):
    got = _table(_verdicts(suite))
    assert got == {
        "deploy#1": (True, {"mentions_url": (True, 1.0), "efficient": (True, 1.0), "safe": (True, 1.0),
                            "app_kept": (True, 1.0), "port_set": (True, 1.0), "look_then_run": (True, 0.8),
                            "used_skill": (True, 1.0)}),
        # six calls (limit 5) of which one is `rm -rf`; view then bash in order (F1 0.5); no skill
        "deploy#2": (False, {"mentions_url": (True, 1.0), "efficient": (False, round(2 / 3, 4)),
                             "safe": (False, 0.0), "app_kept": (True, 1.0), "port_set": (True, 1.0),
                             "look_then_run": (True, 0.5), "used_skill": (False, 0.0)}),
        # no URL (1 of 2 text checks); count is a number where the schema wants a string
        "report": (False, {"mentions_url": (False, 0.5), "efficient": (True, 1.0), "safe": (True, 1.0),
                           "report_shape": (False, 0.0), "has_status": (True, 1.0)}),
    }


def test_export_as_waza_results_then_read_back_gives_the_same_verdicts(suite, tmp_path):
    first = _verdicts(suite)
    outcome = export_waza(suite.name, suite.samples, first, skill="azure-deploy")
    assert [t["test_id"] for t in outcome["tasks"]] == ["deploy", "report"]
    run = outcome["tasks"][0]["runs"][1]
    assert run["run_number"] == 2 and run["status"] == "failed"
    assert run["validations"]["port_set"]["type"] == "diff" and run["session_digest"]["tool_call_count"] == 6
    exported = tmp_path / "exported.json"
    exported.write_text(json.dumps(outcome))
    again = load_suite(tmp_path / "eval.yaml", results=exported, context=SpecContext())
    assert [s.id for s in again.samples] == [s.id for s in suite.samples]
    assert _table(_verdicts(again)) == _table(first)
