"""The peer dialects (waza, Vally) through the one loader: the examples end to end, weights,
errors with file:line, warnings, and results that match nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from assay.core.aggregate import judge_sample
from assay.core.context import SpecContext
from assay.core.errors import SpecError
from assay.runner.execute import grade_one
from assay.runner.resources import default_resources
from assay.runner.suites import detect_dialect, load_suite

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def load(path: Path, results: Path | None = None, dialect: str | None = None):
    return load_suite(path, results=results, dialect=dialect, context=SpecContext())


def run(suite):
    out = {}
    for s in suite.samples:
        results = [grade_one(spec.build(default_resources()), s) for spec in suite.graders_for(s.id)]
        out[s.id] = judge_sample(s.id, results, threshold=suite.threshold)
    return out


def test_waza_example_end_to_end():
    suite = load(EXAMPLES / "waza-suite" / "eval.yaml")
    assert suite.dialect == "waza" and suite.threshold is None and suite.definition.skill == "deploy-helper"
    assert suite.warnings == [] and suite.missing == [] and suite.unmatched_results == []
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
    assert suite.dialect == "vally" and suite.threshold == 0.7 and suite.graders == []
    assert suite.warnings == [] and suite.definition.scoring.weights["tests-exist"] == 3.0
    verdicts = run(suite)
    tests = verdicts["write-add-tests"]
    assert tests.status.value == "passed" and tests.score == pytest.approx(0.75)
    assert [(r.name, r.type, r.weight, r.passed) for r in tests.results] == [
        ("tests-exist", "program", 3.0, True), ("output-contains", "vally_output", 1.0, False)]
    unweighted = [r.model_copy(update={"weight": 1.0}) for r in tests.results]
    assert judge_sample("x", unweighted, threshold=0.7).status.value == "failed"
    tool = {r.name: r for r in verdicts["explain-tool-use"].results}
    assert tool["trajectory-score"].score == 0.5 and tool["trajectory-score"].details["metadata"] == {"toolResults": 2}
    assert not tool["no-errors"].passed and tool["read-before-summary"].passed
    assert verdicts["explain-tool-use"].status.value == "failed"


def test_detect():
    assert detect_dialect({"stimuli": []}) == "vally"
    assert detect_dialect({"name": "x", "tasks": ["tasks/*.yaml"]}) == "waza"
    assert detect_dialect({"name": "x", "samples": []}) == "assay"
    assert detect_dialect({"name": "x", "tasks": ["a.yaml", {"path": "b.yaml"}]}) == "assay"


def write(tmp_path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        p = tmp_path / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return tmp_path / "eval.yaml"


TASK = "id: t1\ninputs:\n  prompt: hi\n  output: hello\n"


@pytest.mark.parametrize("files, message, where", [
    ({"eval.yaml": "name: x\nskill: s\ntasks:\n  - nothing/*.yaml\n"}, "no test files matched", "eval.yaml:4"),
    ({"eval.yaml": "name: x\nskill: s\ngraders:\n  - type: regex\n    name: r\n    config:\n      must_match: ['(']\n"
                   "tasks:\n  - tasks/*.yaml\n", "tasks/a.yaml": TASK},
     "invalid regular expression", "eval.yaml:7"),
    ({"eval.yaml": "name: x\nskill: s\ntasks:\n  - tasks/*.yaml\n",
      "tasks/a.yaml": TASK + "graders:\n  - name: g\n    type: tool_cals\n    config:\n      max_calls: 1\n"},
     "unknown grader type 'tool_cals'", "a.yaml:7"),
    ({"eval.yaml": "name: x\nskill: s\ntasks:\n  - tasks/*.yaml\n", "tasks/a.yaml": TASK, "tasks/b.yaml": TASK},
     "task id 't1' is also used", "b.yaml:1"),
    ({"eval.yaml": "name: x\nskill: s\ntasks:\n  - tasks/*.yaml\n", "tasks/a.yaml": "id: t1\ninputs:\n  prompt: hi\n"},
     "no graded outputs", "eval.yaml"),
    ({"eval.yaml": "name: x\nskill: s\ntasks:\n  - tasks/*.yaml\n",
      "tasks/a.yaml": "id: t1\ninputs:\n  prompt: hi\n", "results.jsonl": '{"output": "x"}\n'},
     r"not a waza results record \(it has output\)", "results.jsonl:1"),
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
    suite = load(path, results=tmp_path / "runs.json")
    assert [s.id for s in suite.samples] == ["t1#1", "t1#2"]
    assert suite.sample_graders["t1#2"][0].weight == 0.5
    assert suite.unmatched_results == ["zz"]
    [warning] = suite.warnings
    assert warning.startswith(f"{tmp_path / 'runs.json'}: ") and "'zz'" in warning


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
    ("threshold: 0.5", "threshold: 2", r"scoring\.threshold: Input should be less than or equal to 1", "eval.yaml:13"),
    ('{program: "true"}', '{program: "true", sub_path: "../x"}', "escapes the workspace", "eval.yaml:10"),
    ('{program: "true"}', '{program: "true", env: {evaluate_workspace: x}}', "cannot be given in env", "eval.yaml:10"),
    ('{substring: "hello (world)"}', '{substring: "hello (world)"}\n        name: p',
     r"duplicate grader name 'p' \(also stimuli\[0\]\.graders\[0\]\)", "eval.yaml:9"),  # unnamed: test_vally_spec
])
def test_vally_errors_name_file_and_line(tmp_path, old, new, message, where):
    text = VALLY.replace(old, new)
    if "duplicate grader" in message:
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


WAZA = {"eval.yaml": "name: x\nskill: s\ngraders:\n  - type: contains\n    name: c\ntasks:\n  - tasks/*.yaml\n"
                     "config: {trials_per_task: 1, timeout_seconds: 60}\n",
        "tasks/a.yaml": "id: t1\ninputs: {prompt: hi}\n", "tasks/b.yaml": "id: t2\nenabled: false\n"}


def test_waza_results_naming_no_task_are_reported_not_dropped_silently(tmp_path):
    rows = [{"task_id": "t1", "output": "x"}, {"task_id": "t-1", "output": "y"}, {"task_id": "t2", "output": "z"}]
    path = write(tmp_path, {**WAZA, "results.jsonl": "".join(json.dumps(r) + "\n" for r in rows)})
    suite = load(path)
    assert [s.id for s in suite.samples] == ["t1"]
    assert suite.unmatched_results == ["t-1"]           # t2 is disabled: its record is expected, not a typo
    [warning] = suite.warnings
    assert warning.startswith(f"{tmp_path.resolve() / 'results.jsonl'}: ") and "'t-1'" in warning


def test_vally_trajectories_naming_no_stimulus_are_reported(tmp_path):
    text = VALLY.replace("    output: hello world\n", "")
    rows = [{"stimulus": {"name": "s1"}, "output": "hello (world)"}, {"stimulus": {"name": "s2"}, "output": "x"}]
    suite = load(write(tmp_path, {"eval.yaml": text, "trajectories.jsonl": "".join(json.dumps(r) + "\n" for r in rows)}))
    assert suite.unmatched_results == ["s2"] and "stimulus" in suite.warnings[0] and "'s2'" in suite.warnings[0]


def test_waza_unknown_config_keys_are_ignored_with_a_warning_naming_the_line(tmp_path):
    text = "name: x\nskill: s\nwaza_version: '0.21'\nconfig:\n  trails_per_task: 3\n  timeout_seconds: 60\ntasks: [tasks/*.yaml]\n"
    files = {**WAZA, "eval.yaml": text, "tasks/a.yaml": "id: t1\ninputs: {prompt: hi, output: hello}\n"}
    suite = load(write(tmp_path, files))
    typo, required = suite.warnings
    assert typo.startswith(f"{tmp_path / 'eval.yaml'}:5: config.trails_per_task: unknown field 'trails_per_task' ignored")
    # so trials_per_task is missing, which waza's BenchmarkSpec.Validate refuses (_waza_semantics)
    assert required.startswith(f"{tmp_path / 'eval.yaml'}:5: config.trials_per_task: waza (Go) refuses this suite")
    assert "(trials_per_task must be at least 1, got 0)" in required


@pytest.mark.parametrize("files, message, where", [
    ({"tasks/a.yaml": "id: t1\ninputs: {output: x}\nenabled: 'no'\n"}, r"enabled: Input should be a valid boolean",
     "a.yaml:3"),
    ({"tasks/a.yaml": "id: [1]\n"}, r"id: a task needs an id \(text\)", "a.yaml:1"),
    ({"tasks/a.yaml": "id: t1\ninputs: {output: x}\ngraders:\n  - {name: g, assertions: [output]}\n"
                      "  - {name: g, assertions: [output]}\n"},
     r"graders\[1\]\.name: duplicate grader name 'g' \(also graders\[0\]\)", "a.yaml:5"),
    ({"eval.yaml": "name: x\nversion: [1]\ntasks: [tasks/*.yaml]\n", "tasks/a.yaml": "id: t1\ninputs: {output: x}\n"},
     r"version: Input should be a valid string", "eval.yaml:2"),
    ({"tasks/a.yaml": "id: t1\n", "results.json": json.dumps({"tasks": [{"id": "t1", "trials": [3]}]})},
     r"a trial must be an object, got int", "results.json[0].trials[0]"),
])
def test_waza_typed_models_name_file_and_line(tmp_path, files, message, where):
    with pytest.raises(SpecError, match=message) as exc:
        load(write(tmp_path, {**WAZA, **files}))
    assert exc.value.where.endswith(where), exc.value.where


@pytest.mark.parametrize("old, new, message, where", [
    ("  - name: s1\n", "  - description: x\n", r"stimuli\[0\]\.name: Field required", "eval.yaml:2"),
    ("        name: p\n", "        name: [p]\n", r"stimuli\[0\]\.graders\[1\]\.name: Input should be a valid string",
     "eval.yaml:9"),
])
def test_vally_typed_models_name_file_and_line(tmp_path, old, new, message, where):
    with pytest.raises(SpecError, match=message) as exc:
        load(write(tmp_path, {"eval.yaml": VALLY.replace(old, new, 1)}))
    assert exc.value.where.endswith(where), exc.value.where


def test_the_dialect_can_be_given_rather_than_detected(tmp_path):
    # A task list with a mistake is not detected as waza (it reads as assay's format, whose
    # error says little); naming the dialect gets waza's own error at the right line.
    path = write(tmp_path, {**WAZA, "eval.yaml": WAZA["eval.yaml"].replace("  - tasks/*.yaml\n",
                                                                           "  - tasks/*.yaml\n  - {path: x}\n")})
    with pytest.raises(SpecError, match="unknown field 'skill'"):
        load(path)
    with pytest.raises(SpecError, match=r"tasks\[1\]: a task entry must be a glob string") as exc:
        load(path, dialect="waza")
    assert exc.value.where.endswith("eval.yaml:8")
    with pytest.raises(SpecError, match=r"unknown dialect 'wazza'; use one of: assay, vally, waza"):
        load(path, dialect="wazza")


def test_a_peer_results_file_found_beside_the_suite_is_an_input(tmp_path):
    path = write(tmp_path, {**WAZA, "results.jsonl": '{"task_id": "t1", "output": "x"}\n'})
    suite = load(path)
    assert tmp_path.resolve() / "results.jsonl" in suite.inputs and tmp_path / "tasks" / "a.yaml" in suite.inputs
