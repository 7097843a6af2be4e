"""waza and Vally suite loaders: the examples end to end, weights, and errors with file:line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from assay.core.aggregate import judge_sample
from assay.core.context import SpecContext
from assay.core.errors import SpecError
from assay.runner.execute import grade_one
from assay.runner.formats import detect_format, vally, waza
from assay.runner.resources import default_resources

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def load(path: Path, **extra):
    data = yaml.safe_load(path.read_text())
    data.update(extra)
    fmt = detect_format(path, data)
    assert fmt is not None
    return fmt.load(path, data, SpecContext())


def run(suite):
    out = {}
    for s in suite.samples:
        results = [grade_one(spec.build(default_resources()), s) for spec in suite.graders_for(s.id)]
        out[s.id] = judge_sample(s.id, results, threshold=suite.threshold)
    return out


def test_waza_example_end_to_end():
    suite = load(EXAMPLES / "waza-suite" / "eval.yaml")
    assert suite.format == "waza" and suite.threshold is None and suite.metadata["skill"] == "deploy-helper"
    assert [g.name for g in suite.graders] == ["reports_url", "safe_tools", "summary_quality"]
    assert sorted(suite.sample_graders) == ["deploy-api", "deploy-webapp", "explain-rollback"]
    webapp = next(s for s in suite.samples if s.id == "deploy-webapp")
    assert webapp.workspace.endswith("workspaces/webapp") and [e.type for e in webapp.transcript][:2] == ["user_message", "tool_call"]
    weights = {g.name: g.weight for g in suite.sample_graders["deploy-webapp"]}
    assert weights == {"workspace_has_app": 2.0, "expert_review": 1.0}
    verdicts = run(suite)
    assert {k: v.status.value for k, v in verdicts.items()} == {
        "deploy-api": "failed", "deploy-webapp": "pending", "explain-rollback": "passed"}
    api = {r.name: r for r in verdicts["deploy-api"].results}
    assert api["node_score"].status.value == "passed" and api["build_then_deploy"].passed
    assert not api["safe_tools"].passed and "rm -rf" in api["safe_tools"].reason


def test_vally_example_weights_change_the_verdict():
    suite = load(EXAMPLES / "vally-stimuli" / "eval.yaml")
    assert suite.format == "vally" and suite.threshold == 0.7 and suite.graders == []
    verdicts = run(suite)
    tests = verdicts["write-add-tests"]
    assert tests.status.value == "passed" and tests.score == pytest.approx(0.75)
    assert [(r.name, r.type, r.weight, r.passed) for r in tests.results] == [
        ("tests-exist", "program", 3.0, True), ("output-contains", "regex", 1.0, False)]
    unweighted = [r.model_copy(update={"weight": 1.0}) for r in tests.results]
    assert judge_sample("x", unweighted, threshold=0.7).status.value == "failed"
    tool = {r.name: r for r in verdicts["explain-tool-use"].results}
    assert tool["trajectory-score"].score == 0.5 and tool["trajectory-score"].details["metadata"] == {"toolResults": 2}
    assert not tool["no-errors"].passed and tool["read-before-summary"].passed
    assert verdicts["explain-tool-use"].status.value == "failed"


def test_detect():
    assert detect_format(Path("e.yaml"), {"stimuli": []}) is vally
    assert detect_format(Path("e.yaml"), {"name": "x", "tasks": ["tasks/*.yaml"]}) is waza
    assert detect_format(Path("e.yaml"), {"name": "x", "samples": []}) is None


def write(tmp_path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        p = tmp_path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return tmp_path / "eval.yaml"


TASK = "id: t1\ninputs:\n  prompt: hi\n  output: hello\n"


@pytest.mark.parametrize("files, message, where", [
    ({"eval.yaml": "name: x\nskill: s\ntasks:\n  - tasks/*.yaml\ngrader: []\n", "tasks/a.yaml": TASK},
     "unknown field 'grader'", "eval.yaml:5"),
    ({"eval.yaml": "name: x\nskill: s\ntasks:\n  - nothing/*.yaml\n"}, "no task files match", "eval.yaml:4"),
    ({"eval.yaml": "name: x\nskill: s\ngraders:\n  - type: regex\n    name: r\n    config:\n      must_match: ['(']\n"
                   "tasks:\n  - tasks/*.yaml\n", "tasks/a.yaml": TASK},
     "invalid regular expression", "eval.yaml:7"),
    ({"eval.yaml": "name: x\nskill: s\ntasks:\n  - tasks/*.yaml\n",
      "tasks/a.yaml": TASK + "graders:\n  - name: g\n    type: tool_cals\n    max_calls: 1\n"},
     "unknown grader type 'tool_cals'", "a.yaml:7"),
    ({"eval.yaml": "name: x\nskill: s\ntasks:\n  - tasks/*.yaml\n", "tasks/a.yaml": TASK, "tasks/b.yaml": TASK},
     "task id 't1' is also used", "b.yaml:1"),
    ({"eval.yaml": "name: x\nskill: s\ntasks:\n  - tasks/*.yaml\n", "tasks/a.yaml": "id: t1\ninputs:\n  prompt: hi\n"},
     "no graded outputs", "eval.yaml"),
    ({"eval.yaml": "name: x\nskill: s\ntasks:\n  - tasks/*.yaml\n",
      "tasks/a.yaml": "id: t1\ninputs:\n  prompt: hi\n", "results.jsonl": '{"output": "x"}\n'},
     "needs task_id", "results.jsonl:1"),
    ({"eval.yaml": "name: x\nskill: s\ntasks:\n  - tasks/*.yaml\n",
      "tasks/a.yaml": "id: t1\ninputs:\n  prompt: hi\n", "results.jsonl": '{"task_id": "t1", "output": NaN}\n'},
     "NaN is not JSON", "results.jsonl:1"),
    ({"eval.yaml": "name: x\nskill: s\ntasks:\n  - tasks/*.yaml\n",
      "tasks/a.yaml": "id: t1\ninputs:\n  prompt: hi\n", "results.jsonl": "[" * 100000 + "]" * 100000 + "\n"},
     "nested too deeply", "results.jsonl:1"),
])
def test_waza_errors_name_file_and_line(tmp_path, files, message, where):
    path = write(tmp_path, files)
    with pytest.raises(SpecError, match=message) as exc:
        load(path)
    assert exc.value.where.endswith(where)


def test_waza_results_file_and_trials(tmp_path):
    path = write(tmp_path, {
        "eval.yaml": "name: x\nskill: s\ngraders:\n  - type: regex\n    config: {must_match: [ok]}\ntasks:\n  - include: tasks/*.yaml\n",
        "tasks/a.yaml": "id: t1\ninputs: {prompt: hi}\ngraders:\n  - name: g\n    type: human\n    weight: 0.5\n",
        "tasks/off.yaml": "id: t2\nenabled: false\n",
        "runs.json": json.dumps({"tasks": [{"id": "t1", "trials": [{"trial_id": 1, "output": "ok"},
                                                                    {"trial_id": 2, "output": "no"}]},
                                           {"id": "zz", "trials": []}]})})
    suite = load(path, results=str(tmp_path / "runs.json"))
    assert [s.id for s in suite.samples] == ["t1#1", "t1#2"]
    assert suite.sample_graders["t1#2"][0].weight == 0.5
    assert suite.metadata["unmatched_results"] == ["zz"]


VALLY = """stimuli:
  - name: s1
    prompt: hi
    output: hello world
    graders:
      - type: output-contains
        config: {substring: "hello (world)"}
      - type: program
        name: p
        config: {program: "true"}
scoring:
  weights: {output-contains: 2, p: 1}
  threshold: 0.5
"""


def test_vally_inline_output_and_literal_substring(tmp_path):
    suite = load(write(tmp_path, {"eval.yaml": VALLY.replace("hello world", "say hello (world)")}))
    [s] = suite.samples
    verdict = run(suite)["s1"]
    assert verdict.status.value == "passed"
    assert [g.weight for g in suite.sample_graders["s1"]] == [2.0, 1.0]


@pytest.mark.parametrize("old, new, message, where", [
    ("{output-contains: 2, p: 1}", "{output-contains: 2, q: 1}", "scoring weight 'q' names no grader", "eval.yaml:12"),
    ("threshold: 0.5", "threshold: 2", "threshold must be", "eval.yaml:13"),
    ("    prompt: hi\n", "    prompt: hi\n    promt: x\n", "unknown field 'promt'", "eval.yaml:4"),
    ('{program: "true"}', '{program: "true", sub_path: "../x"}', "escapes the workspace", "eval.yaml:10"),
    ('{program: "true"}', '{program: "true", env: {evaluate_workspace: x}}', "cannot be given in env", "eval.yaml:10"),
    ("        name: p\n", "", "two graders of this stimulus", "eval.yaml:8"),
])
def test_vally_errors_name_file_and_line(tmp_path, old, new, message, where):
    text = VALLY.replace(old, new)
    if "two graders" in message:
        text = text.replace("type: output-contains\n        config: {substring: \"hello (world)\"}",
                            "type: program\n        config: {program: \"true\"}").replace("output-contains: 2, ", "")
    with pytest.raises(SpecError, match=message) as exc:
        load(write(tmp_path, {"eval.yaml": text}))
    assert exc.value.where.endswith(where), exc.value.where


def test_vally_trajectories_file(tmp_path):
    text = VALLY.replace("    output: hello world\n", "")
    traj = {"stimulus": {"name": "s1"}, "output": "hello (world)", "workDir": ".",
            "events": [{"type": "tool_call", "data": {"toolName": "bash", "toolCallId": "1", "arguments": {}}}]}
    suite = load(write(tmp_path, {"eval.yaml": text, "trajectories.jsonl": json.dumps(traj) + "\n" + json.dumps(traj)}))
    assert [s.id for s in suite.samples] == ["s1#1", "s1#2"]
    assert suite.samples[0].workspace == str(tmp_path.resolve()) and suite.samples[0].tool_calls[0].name == "bash"
