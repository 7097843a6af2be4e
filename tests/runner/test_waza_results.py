"""waza suites as waza writes them today: results files in every shape waza writes (Go
``EvaluationOutcome``, ``--transcript-dir`` files, Python ``EvalResult``), unknown keys
ignored with warnings (as waza 0.21 and older ignore them), the edition deciding what ``code`` assertions see, ``tasks_from`` CSVs,
``judge_model``, weights, and ``program`` picked by its config. Expected verdicts are derived
from waza's source (internal/orchestration/runner.go, internal/models/*.go, internal/graders/)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from assay.core.aggregate import judge_sample
from assay.core.context import SpecContext
from assay.core.errors import SpecError
from assay.runner.execute import grade_one
from assay.runner.resources import default_resources
from assay.runner.suites import load_suite

EVAL = """\
name: go-eval
skill: demo
config:
  trials_per_task: 2
  judge_model: judge-9
  telemetry: true
graders:
  - type: behavior
    name: lean
    config: {max_tool_calls: 2, flavour: extra}
  - type: code
    name: asserts
    weight: 0
    config:
      assertions:
        - "len(tool_calls) >= 1 and tool_calls[0]['arguments']['command'].startswith('pytest')"
        - "len(errors) == 0"
tasks:
  - tasks/*.yaml
"""
TASK = "id: fix\nname: Fix tests\ninputs:\n  prompt: make the tests pass\n  context: {lang: go}\ncolour: blue\n"


def _run(number, command, output, tools):
    start = {"type": "tool.execution_start", "tool_call_id": f"c{number}", "tool_name": "bash",
             "arguments": {"command": command}}
    done = {"type": "tool.execution_complete", "tool_call_id": f"c{number}", "success": True,
            "tool_result": {"content": "ok"}}
    return {"run_number": number, "attempts": 1, "status": "passed", "duration_ms": 1200,
            "validations": {}, "final_output": output, "transcript": [start, done],
            "session_digest": {"tool_call_count": tools, "tools_used": ["bash"] * tools, "errors": []}}


OUTCOME = {"eval_id": "e1", "skill": "demo", "eval_name": "go-eval", "config": {"runs_per_test": 2},
           "summary": {"total_tests": 1}, "metrics": {},
           "tasks": [{"test_id": "fix", "display_name": "Fix tests", "status": "failed",
                      "runs": [_run(1, "pytest -q", "All green", 1), _run(2, "go test", "Done", 3)]}]}


def write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root / "eval.yaml"


def load(path, results=None, waza_version="0.21"):
    """Read as waza 0.21 unless told otherwise: the last release before strict decoding, so the
    unknown keys these suites carry on purpose are warnings (tests/runner/test_waza_releases.py
    reads them as the newest release)."""
    return load_suite(path, results=results, context=SpecContext(), waza_version=waza_version)


def verdicts(suite):
    out = {}
    for s in suite.samples:
        results = [grade_one(spec.build(default_resources()), s) for spec in suite.graders_for(s.id)]
        out[s.id] = judge_sample(s.id, results, threshold=suite.threshold)
    return out


def test_go_results_json_every_run_graded_with_its_session(tmp_path):
    path = write(tmp_path, {"eval.yaml": EVAL, "tasks/fix.yaml": TASK, "results.json": json.dumps(OUTCOME)})
    suite = load(path)
    assert [s.id for s in suite.samples] == ["fix#1", "fix#2"]
    assert suite.samples[1].metadata["session_digest"]["tool_call_count"] == 3
    got = verdicts(suite)
    # run 1: one pytest call (lean passes, assertions hold); run 2: 3 calls > 2 and a go test
    assert [(r.name, r.passed) for r in got["fix#1"].results] == [("lean", True), ("asserts", True)]
    assert [(r.name, r.passed) for r in got["fix#2"].results] == [("lean", False), ("asserts", False)]
    assert got["fix#1"].passed and not got["fix#2"].passed
    assert suite.graders[1].weight == 1.0  # waza: a weight of 0 or less counts as 1


def test_unknown_keys_are_warned_about_with_file_and_line_and_ignored(tmp_path):
    path = write(tmp_path, {"eval.yaml": EVAL + "hooks: {before_run: []}\nowner: team-x\n", "tasks/fix.yaml": TASK,
                            "results.json": json.dumps(OUTCOME)})
    warnings = "\n".join(load(path).warnings)
    assert f"{tmp_path / 'eval.yaml'}:6: config.telemetry: unknown field 'telemetry' ignored" in warnings
    assert "eval.yaml:21: owner: unknown field 'owner' ignored" in warnings
    assert "fix.yaml:6: colour: unknown field 'colour' ignored" in warnings
    assert "eval.yaml:10: graders[0].config.flavour: unknown behavior option 'flavour' ignored, as waza 0.21.0 " \
           "ignores it" in warnings
    assert "eval.yaml:13: weight 0 counts as 1" in warnings


def test_transcript_dir_files_are_runs(tmp_path):
    path = write(tmp_path, {"eval.yaml": EVAL, "tasks/fix.yaml": TASK})
    folder = tmp_path / "transcripts"
    folder.mkdir()
    for n, run in enumerate(OUTCOME["tasks"][0]["runs"], 1):
        record = {"task_id": "fix", "task_name": "Fix tests", "status": "passed", "prompt": "make the tests pass",
                  "final_output": run["final_output"], "transcript": run["transcript"],
                  "session": run["session_digest"], "duration_ms": 10}
        (folder / f"fix-tests-2026010{n}-120000.json").write_text(json.dumps(record))
    suite = load(path, results=folder)
    assert [s.id for s in suite.samples] == ["fix#1", "fix#2"]
    assert [v.passed for v in verdicts(suite).values()] == [True, False]


@pytest.mark.parametrize("results, message, where", [
    ({"tasks": [{"name": "fix", "score": 1}]}, r"not a waza results record \(it has name, score\)",
     "results.json[0]"),
    ({"tasks": [{"test_id": "fix", "runs": [{"score": 1}]}]}, r"not a waza run \(it has score\)",
     "results.json[0].runs[0]"),
    ({"tasks": [{"test_id": ["fix"], "runs": []}]}, r"test_id must name a task", "results.json[0]"),
    ({"summary": {"total_tests": 0}}, r"not a waza results record \(it has summary\)", "results.json[0]"),
])
def test_results_of_no_known_shape_are_errors_not_empty_outputs(tmp_path, results, message, where):
    path = write(tmp_path, {"eval.yaml": EVAL, "tasks/fix.yaml": TASK, "results.json": json.dumps(results)})
    with pytest.raises(SpecError, match=message) as exc:
        load(path)
    assert exc.value.where.endswith(where), exc.value.where


PY_EVAL = """\
name: py-eval
skill: demo
graders:
  - type: regex
    name: says_done
    config: {must_match: ["DONE"]}
  - type: code
    name: asserts
    config:
      assertions: ["len(tool_calls) == 1", "len(errors) == 0"]
tasks: ["tasks/*.yaml"]
"""


def test_python_edition_results_regex_ignores_case_and_assertions_see_the_conversation(tmp_path):
    trial = {"trial_id": 1, "status": "passed", "output": "all done",
             "transcript": [{"role": "tool", "name": "bash", "content": "{'command': 'ls'}"},
                            {"role": "assistant", "content": "Done, no Errors"}]}
    result = {"eval_id": "x", "skill": "demo", "eval_name": "py-eval", "summary": {},
              "tasks": [{"id": "fix", "name": "Fix", "status": "passed", "trials": [trial]}]}
    path = write(tmp_path, {"eval.yaml": PY_EVAL, "tasks/fix.yaml": TASK, "results.json": json.dumps(result)})
    suite = load(path, waza_version=None)  # a Python-edition suite pins no Go release
    got = verdicts(suite)["fix"]
    assert [(r.name, r.passed) for r in got.results] == [("says_done", True), ("asserts", False)]
    assert got.results[1].details["assertions"][1] == {"assertion": "len(errors) == 0", "passed": False}
    assert suite.samples[0].metadata["waza_task"]["inputs"]["context"] == {"lang": "go"}


@pytest.mark.parametrize("version, own", [("0.21", "judge-9"), ("0.26", "judge-9"), ("0.27", "mine"), ("0.35", "mine")])
def test_judge_model_is_a_default_for_prompt_graders_from_0_27_and_an_override_before(tmp_path, version, own):
    # internal/graders/run.go applyDefaults (0a694334) fills only an empty model; runner.go's
    # injectJudgeModel (091a1f9e, before typed parameters) replaced it
    text = ("name: e\nskill: s\nconfig: {judge_model: judge-9}\ntasks: [tasks/*.yaml]\ngraders:\n"
            "  - {type: prompt, name: judged, config: {prompt: 'Is it right?', model: mine}}\n"
            "  - {type: prompt, name: plain, config: {prompt: 'Is it right?'}}\n")
    task = TASK.replace("colour: blue\n", "")
    suite = load(write(tmp_path, {"eval.yaml": text, "tasks/fix.yaml": task, "results.json": json.dumps(OUTCOME)}),
                 waza_version=version)
    assert suite.graders[0].config.model == own
    assert suite.graders[1].config.model == "judge-9"


def test_tasks_from_csv_rows_templates_and_range(tmp_path):
    csv = "id,name,prompt,topic\n,alpha,Explain {{.Vars.topic}} to {{.Vars.who}},sets\nq2,,Plain,x\n,,{{if .X}}y{{end}},z\n"
    text = ("name: csv\nskill: s\ninputs: {who: students}\ntasks_from: data.csv\nrange: [1, 3]\n"
            "graders:\n  - {type: text, name: t, config: {contains: [ok]}}\n")
    rows = [{"task_id": t, "output": "OK"} for t in ("alpha", "q2", "row-3")]
    suite = load(write(tmp_path, {"eval.yaml": text, "data.csv": csv,
                                  "results.jsonl": "".join(json.dumps(r) + "\n" for r in rows)}))
    assert [(s.id, s.input) for s in suite.samples] == [
        ("alpha", "Explain sets to students"), ("q2", "Plain"), ("row-3", "{{if .X}}y{{end}}")]
    narrow = text.replace("[1, 3]", "[2, 2]")
    suite = load(write(tmp_path, {"eval.yaml": narrow}))
    assert [s.id for s in suite.samples] == ["q2"] and suite.unmatched_results == ["alpha", "row-3"]


@pytest.mark.parametrize("config, grader", [
    ({"command": sys.executable, "args": ["-c", "pass"], "timeout": 5}, "waza_program"),
    ({"program": sys.executable, "args": ["-c", "pass"]}, "program"),
])
def test_program_is_wazas_unless_written_in_vallys_shape(tmp_path, config, grader):
    text = EVAL.replace("graders:\n", "graders:\n  - type: program\n    name: prog\n"
                                      f"    config: {json.dumps(config)}\n", 1)
    suite = load(write(tmp_path, {"eval.yaml": text, "tasks/fix.yaml": TASK, "results.json": json.dumps(OUTCOME)}))
    assert suite.graders[0].type == grader
    assert verdicts(suite)["fix#1"].results[0].passed


def test_unknown_keys_inside_nested_waza_options_are_ignored_too(tmp_path):
    text = EVAL.replace("graders:\n", "graders:\n  - type: tool_constraint\n    name: tc\n    config:\n"
                                      "      expect_tools: [{tool: bash, note: why}]\n", 1)
    suite = load(write(tmp_path, {"eval.yaml": text, "tasks/fix.yaml": TASK, "results.json": json.dumps(OUTCOME)}))
    assert any("graders[0].config.expect_tools[0].note: unknown waza_tool_constraint option 'note'" in w
               for w in suite.warnings)
    assert verdicts(suite)["fix#1"].results[0].passed


def test_trials_per_task_is_checked_against_the_runs_in_the_results_file(tmp_path):
    # the two runs of `fix` are two samples of one cluster; trials_per_task 3 promises three
    path = write(tmp_path, {"eval.yaml": EVAL.replace("trials_per_task: 2", "trials_per_task: 3"),
                            "tasks/fix.yaml": TASK, "results.json": json.dumps(OUTCOME)})
    suite = load(path)
    assert [s.id for s in suite.samples] == ["fix#1", "fix#2"] and suite.clusters == {"fix#1": "fix", "fix#2": "fix"}
    assert any(w.startswith(f"{path}:4: config.trials_per_task is 3, but") and "fix (2)" in w for w in suite.warnings)
    assert any(line.startswith("trials_per_task: 3: each task's runs") for line in suite.explain)
    assert not any("trials_per_task is" in w for w in load(write(tmp_path, {"eval.yaml": EVAL})).warnings)


@pytest.mark.parametrize("value", ["three", 0, 1.5])
def test_trials_per_task_must_be_a_whole_number_from_1(tmp_path, value):
    path = write(tmp_path, {"eval.yaml": EVAL.replace("trials_per_task: 2", f"trials_per_task: {value}"),
                            "tasks/fix.yaml": TASK, "results.json": json.dumps(OUTCOME)})
    with pytest.raises(SpecError) as exc:
        load(path)
    assert exc.value.where == f"{path}:4" and "config.trials_per_task" in str(exc.value)
