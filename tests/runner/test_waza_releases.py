"""A waza suite read as the release it targets (runner/suites/dialects/_waza_releases.py): strict
decoding from 0.24 in waza's words, warnings before; kinds by release (regex/keyword before 0.21,
the Go tool_calls from 0.27); task `expected` checks from 0.27; globs failing only when none
matches; results-file schemaVersion; and --explain-dialect / --waza-version on the command line."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from suite_files import load, write  # tests/suite_files.py

from assay.core.errors import SpecError
from assay.runner.execute import grade_one
from assay.runner.resources import default_resources

EVAL = "name: e\nskill: s\ntasks:\n  - tasks/*.yaml\n"
TASK = "id: t1\nname: T\ninputs:\n  prompt: deploy it\n  output: Deployed to Azure.\n"




def results(suite, sample_id="t1"):
    sample = next(s for s in suite.samples if s.id == sample_id)
    return {spec.name: grade_one(spec.build(default_resources()), sample) for spec in suite.graders_for(sample_id)}


def test_unknown_task_key_is_an_error_in_wazas_words_from_0_24_and_a_warning_before(tmp_path):
    path = write(tmp_path, {"eval.yaml": EVAL, "tasks/a.yaml": TASK + "colour: blue\n"})
    with pytest.raises(SpecError, match="field colour not found in type models.TestCase") as exc:
        load(path)
    assert exc.value.where.endswith("a.yaml:6")
    with pytest.raises(SpecError, match="field colour not found"):
        load(path, "0.24")
    assert any("a.yaml:6: colour: unknown field 'colour' ignored" in w for w in load(path, "0.21").warnings)


def test_eval_type_is_named_as_the_release_names_it(tmp_path):
    path = write(tmp_path, {"eval.yaml": EVAL + "owner: x\n", "tasks/a.yaml": TASK})
    with pytest.raises(SpecError, match="type models.BenchmarkSpec"):
        load(path, "0.27")
    with pytest.raises(SpecError, match="type models.EvalSpec"):
        load(path, "0.31")


def test_unknown_grader_config_key_uses_wazas_decode_error(tmp_path):
    path = write(tmp_path, {"eval.yaml": EVAL + "graders:\n  - type: text\n    name: g\n    config:\n"
                                                 "      contains: [azure]\n      colour: red\n", "tasks/a.yaml": TASK})
    with pytest.raises(SpecError, match=r'invalid grader config for "g" \(type "text"\): failed to decode grader '
                                        r"parameters of type models.TextGraderParameters: field colour not found"):
        load(path, "0.35")
    assert any("unknown text option 'colour' ignored" in w for w in load(path, "0.21").warnings)
    # unpinned, the newest release that loads it is 0.21 (grader options are lenient before 0.24),
    # and the warning carries 0.24's refusal in waza's words
    warnings = load(path).warnings
    assert "read as waza 0.21.0" in warnings[0] and "field colour not found" in warnings[0]


def test_fields_waza_defines_are_never_unknown(tmp_path):
    task = TASK + ("golden: true\nfirst_event_timeout_seconds: 5\nskill_directories: [skills]\n"
                   "instruction_files: [AGENTS.md]\nexpected:\n  should_trigger: true\n  behavior: {max_tool_calls: 3}\n")
    evalf = EVAL + "schemaVersion: '1.5'\nconfig:\n  trials_per_task: 1\n  timeout_seconds: 9\n  workers: 2\n  inject_skill_body: false\n  disabled_skills: [x]\n"
    suite = load(write(tmp_path, {"eval.yaml": evalf, "tasks/a.yaml": task}))
    assert suite.warnings == []


def test_expected_checks_are_results_of_their_own_from_0_27_ignoring_case(tmp_path):
    task = TASK + "expected:\n  output_contains: [AZURE, deployed]\n  output_not_contains: [error]\n" \
                  "  output_contains_any: [gcp, azure]\n"
    path = write(tmp_path, {"eval.yaml": EVAL, "tasks/a.yaml": task})
    got = results(load(path))
    assert {n: (r.passed, r.score) for n, r in got.items()} == {
        "_output_contains": (True, 1.0), "_output_not_contains": (True, 1.0), "_output_contains_any": (True, 1.0)}
    assert load(path, "0.26").sample_graders == {}


def test_globs_fail_only_when_no_pattern_matches(tmp_path):
    path = write(tmp_path, {"eval.yaml": EVAL + "  - more/*.yaml\n", "tasks/a.yaml": TASK})
    suite = load(path)
    assert [s.id for s in suite.samples] == ["t1"]
    assert any("tasks[1]: no task files match 'more/*.yaml'" in w for w in suite.warnings)


def test_kinds_follow_the_release(tmp_path):
    grader = "graders:\n  - type: {kind}\n    name: g\n    config: {config}\n"
    files = {"tasks/a.yaml": TASK}
    regex = EVAL + grader.format(kind="regex", config="{must_match: ['Deployed to (?i)azure']}")
    assert results(load(write(tmp_path, {**files, "eval.yaml": regex}), "0.12"))["g"].passed
    keyword = EVAL + grader.format(kind="keyword", config="{must_contain: [AZURE], must_not_contain: [fail]}")
    suite = load(write(tmp_path, {**files, "eval.yaml": keyword}), "0.12")
    assert suite.graders[0].type == "waza_text" and results(suite)["g"].passed
    with pytest.raises(SpecError, match="unsupported grader type at waza 0.35.0"):
        load(write(tmp_path, {**files, "eval.yaml": keyword}), "0.35")
    text = EVAL + grader.format(kind="text", config="{contains: [azure]}")
    with pytest.raises(SpecError, match=r"unsupported grader type at waza 0.12.0.*Valid grader types: .*keyword"):
        load(write(tmp_path, {**files, "eval.yaml": text}), "0.12")
    calls = EVAL + grader.format(kind="tool_calls", config="{required_tools: [bash]}")
    with pytest.raises(SpecError, match="unsupported grader type at waza 0.26.0"):
        load(write(tmp_path, {**files, "eval.yaml": calls}), "0.26")
    assert load(write(tmp_path, {**files, "eval.yaml": calls})).graders[0].type == "waza_tool_calls"


def test_go_tool_calls_read_tool_events_before_the_digest(tmp_path):
    evalf = EVAL + ("graders:\n  - type: tool_calls\n    name: calls\n    config:\n      required_tools: [bash]\n"
                    "      expect:\n        - tool: '^search$'\n          args: {query: {regex: '^auth'}, limit: "
                    "{range: {gte: 1, lte: 5}}}\n")
    run = {"run_number": 1, "status": "passed", "final_output": "ok", "transcript": [],
           "session_digest": {"tool_calls": [{"name": "bash", "arguments": {"command": "ls"}},
                                             {"name": "search", "arguments": {}}]},
           "tool_events": [{"sequence": 2, "tool_call_id": "c2", "tool_name": "search",
                            "args": {"query": "auth flow", "limit": 3}}]}
    outcome = {"schemaVersion": "1.5", "tasks": [{"test_id": "t1", "runs": [run]}]}
    path = write(tmp_path, {"eval.yaml": evalf, "tasks/a.yaml": TASK.replace("  output: Deployed to Azure.\n", ""),
                            "results.json": json.dumps(outcome)})
    suite = load(path)
    got = results(suite)["calls"]
    assert got.passed and got.score == 1.0 and got.details["expect"][0]["matched_call_id"] == "c2"
    assert any("schemaVersion 1.5" in line for line in suite.explain)
    run.pop("tool_events")  # the digest keeps no search arguments: the expectation fails
    (tmp_path / "results.json").write_text(json.dumps(outcome))
    got = results(load(path))["calls"]
    assert not got.passed and got.score == 0.5 and 'argument "limit": not present on tool call' in got.reason


def test_results_of_another_major_schema_are_refused(tmp_path):
    path = write(tmp_path, {"eval.yaml": EVAL, "tasks/a.yaml": TASK,
                            "results.json": json.dumps({"schemaVersion": "2.0", "tasks": []})})
    with pytest.raises(SpecError, match='uses schemaVersion .2.0., but waza.s results are schemaVersion 1.x; run "waza'):
        load(path)


def test_release_comes_from_the_option_then_the_key_then_the_newest(tmp_path):
    path = write(tmp_path, {"eval.yaml": EVAL + "waza_version: '0.27'\n", "tasks/a.yaml": TASK})
    assert "release: waza 0.27.0, from the suite's `waza_version` key" in load(path).explain
    assert "release: waza 0.21.0, from --waza-version" in load(path, "0.21").explain
    with pytest.raises(SpecError, match="newer than the newest release assay knows"):
        load(path, "9.0")
    with pytest.raises(SpecError, match="not a waza release"):
        load(path, "latest")


def test_cli_explains_the_dialect_without_grading(tmp_path):
    path = write(tmp_path, {"eval.yaml": EVAL, "tasks/a.yaml": TASK})
    out = subprocess.run([sys.executable, "-m", "assay.cli.entry", "run", str(path), "--explain-dialect",
                          "--waza-version", "0.23"], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("dialect: waza (detected: A waza suite")
    assert lines[1] == "edition: Go (a release is pinned)"
    assert lines[2].startswith("release: waza 0.23.0 (not a release assay lists; read by the rules that hold at it)")
    assert any("grader kind `trigger`" in line for line in lines) and not any("known fields only" in x for x in lines)


@pytest.mark.parametrize("schema", [None, "1.0", "1.1", "1.2", "1.3", "1.4", "1.5"])
def test_results_of_every_schema_version_load_and_grade(tmp_path, schema):
    run = {"run_number": 1, "status": "passed", "final_output": "Deployed to Azure", "transcript": [],
           "session_digest": {"tool_calls": [{"name": "bash", "arguments": {"command": "azd up"}}]}}
    if schema not in (None, "1.0"):
        run["tool_events"] = [{"sequence": 1, "tool_call_id": "c1", "tool_name": "bash", "args": {"command": "azd up"}}]
        run["checkpoints"] = []
    outcome = {**({"schemaVersion": schema} if schema else {}), "tasks": [{"test_id": "t1", "runs": [run]}]}
    evalf = EVAL + ("graders:\n  - type: tool_calls\n    name: calls\n    config:\n      expect:\n"
                    "        - {tool: bash, args: {command: {contains: azd}}}\n")
    task = TASK.replace("  output: Deployed to Azure.\n", "") + "expected:\n  output_contains: [azure]\n"
    suite = load(write(tmp_path, {"eval.yaml": evalf, "tasks/a.yaml": task, "results.json": json.dumps(outcome)}))
    got = results(suite)
    assert got["calls"].passed and got["_output_contains"].passed
    assert ("tool_events" in suite.samples[0].metadata) is (schema not in (None, "1.0"))


def test_allow_only_and_extract_json_are_graded_as_waza_grades_them(tmp_path):
    # tool_constraint_grader.go (a3f8e060): exact names, one check per call; json_schema_grader.go
    # (9c5d7d97): exactly one embedded object or array
    graders = ("graders:\n  - {type: tool_constraint, name: tools, config: {allow_only: [{tool: bash}]}}\n"
               "  - {type: json_schema, name: js, config: {schema: {type: object, required: [ok]}, extract_json: true}}\n"
               "  - {type: json_schema, name: strict, config: {schema: {type: object}, extract_json: false}}\n")
    task = TASK.replace("Deployed to Azure.", "'Done: ```json {\"ok\": 1} ```'") + \
        "  transcript:\n    - {type: tool_call, name: bash}\n    - {type: tool_call, name: curl}\n"
    suite = load(write(tmp_path, {"eval.yaml": EVAL + graders, "tasks/a.yaml": task}))
    got = results(suite)
    assert [s.type for s in suite.graders] == ["waza_tool_constraint", "waza_json_schema", "json_schema"]
    assert not got["tools"].passed and got["tools"].score == 0.5 and "Undeclared tool used: curl" in got["tools"].reason
    assert got["js"].passed and not got["strict"].passed


@pytest.mark.parametrize("value", ["maybe", 1])
def test_extract_json_must_be_a_boolean(tmp_path, value):
    path = write(tmp_path, {"eval.yaml": EVAL + "graders:\n  - type: json_schema\n    name: g\n    config:\n"
                                              f"      schema: {{type: object}}\n      extract_json: {value}\n",
                            "tasks/a.yaml": TASK})
    with pytest.raises(SpecError, match="extract_json must be true or false") as exc:
        load(path)
    assert exc.value.where.endswith("eval.yaml:10") and exc.value.path == "graders[0].config.extract_json"


def test_cli_refuses_an_unknown_key_with_exit_2_and_reads_it_as_0_21_with_a_warning(tmp_path):
    path = write(tmp_path, {"eval.yaml": EVAL, "tasks/a.yaml": TASK + "colour: blue\n"})
    run = [sys.executable, "-m", "assay.cli.entry", "run", str(path), "-q"]
    out = subprocess.run(run, capture_output=True, text=True, check=False)
    assert out.returncode == 2 and "a.yaml:6: colour: field colour not found in type models.TestCase" in out.stderr
    out = subprocess.run([*run, "--waza-version", "0.21"], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    assert "a.yaml:6: colour: unknown field 'colour' ignored" in out.stderr


def test_max_workers_is_unknown_from_0_24_where_it_became_workers(tmp_path):
    path = write(tmp_path, {"eval.yaml": EVAL + "config:\n  max_workers: 4\n  trials_per_task: 1\n  timeout_seconds: 9\n",
                            "tasks/a.yaml": TASK})
    with pytest.raises(SpecError, match="field max_workers not found in type models.Config"):
        load(path, "0.24")
    assert load(path, "0.21").warnings == []


def test_prompt_file_is_read_from_0_27_and_never_out_of_the_tasks_folder(tmp_path):
    # testcase.go resolvePromptFile (f249bad6): the prompt is the file's text from 0.27
    task = "id: t1\nname: T\ninputs:\n  prompt_file: p.md\n  output: Deployed to Azure.\n"
    path = write(tmp_path, {"eval.yaml": EVAL, "tasks/a.yaml": task, "tasks/p.md": "deploy it"})
    assert load(path, "0.27").samples[0].input == "deploy it"
    assert load(path, "0.26").samples[0].input is None  # not read before 0.27
    (tmp_path / "secret.md").write_text("outside")
    (tmp_path / "tasks" / "p.md").unlink()
    (tmp_path / "tasks" / "p.md").symlink_to(tmp_path / "secret.md")
    with pytest.raises(SpecError, match="leads outside the task's folder") as exc:
        load(path)
    assert exc.value.where.endswith("a.yaml:4") and exc.value.path == "inputs.prompt_file"
