"""The command line as a user runs it: a real process, real files, exit codes."""

import json
import os
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def assay(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "assay.cli.main", *args], capture_output=True,
                          text=True, cwd=cwd, timeout=120)


def write_suite(tmp_path, graders, rows):
    (tmp_path / "data.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
                                         encoding="utf-8")
    (tmp_path / "eval.yaml").write_text(textwrap.dedent(f"""\
        name: cli-test
        dataset: data.jsonl
        graders: {json.dumps(graders)}
        """), encoding="utf-8")
    return tmp_path / "eval.yaml"


def test_exit_0_when_all_pass(tmp_path):
    p = write_suite(tmp_path, [{"type": "contains"}], [{"id": "a", "output": "北京是首都", "expected": "首都"}])
    r = assay("run", str(p))
    assert r.returncode == 0, r.stderr
    assert "1/1 passed" in r.stdout


def test_exit_1_when_some_fail_with_outputs(tmp_path):
    p = write_suite(tmp_path, [{"type": "exact_match", "name": "em"}, {"type": "contains"}],
                    [{"id": "a", "output": "x", "expected": "x"}, {"id": "b", "output": "y", "expected": "x"}])
    out, junit, summary = tmp_path / "r.jsonl", tmp_path / "r.xml", tmp_path / "s.json"
    r = assay("run", str(p), "--out", str(out), "--junit", str(junit), "--summary-json", str(summary))
    assert r.returncode == 1, r.stderr
    assert "FAILED b" in r.stdout and "em" in r.stdout
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert [(x["id"], x["passed"], x["score"]) for x in lines] == [("a", True, 1.0), ("b", False, 0.0)]
    assert {res["name"] for res in lines[1]["results"]} == {"em", "contains"}
    suite = ET.parse(junit).getroot().find("testsuite")
    assert suite.get("tests") == "2" and suite.get("failures") == "1"
    assert suite.findall("testcase")[1].find("failure") is not None
    data = json.loads(summary.read_text())
    assert data["passed"] == 1 and data["graders"][0]["pass_rate"] == 0.5


@pytest.mark.parametrize("suite, message", [
    ("name: x\ngraders: [{type: nope}]\nsamples: []\n", "eval.yaml:2: graders[0].type: unknown grader type 'nope'"),
    ("name: x\ngraders:\n  - type: regex\n    config: {pattern: '(a'}\nsamples: []\n",
     "eval.yaml:4: graders[0].config.pattern: invalid regular expression"),
    ("name: x\ndataset: missing.jsonl\ngraders: [{type: contains}]\n", "dataset file not found"),
])
def test_exit_2_on_invalid_suite(tmp_path, suite, message):
    (tmp_path / "eval.yaml").write_text(suite)
    r = assay("run", str(tmp_path / "eval.yaml"))
    assert r.returncode == 2
    assert message in r.stderr
    assert "Traceback" not in r.stderr


def test_exit_2_on_invalid_dataset_row(tmp_path):
    p = write_suite(tmp_path, [{"type": "contains"}], [{"id": "a", "output": "x"}])
    with (tmp_path / "data.jsonl").open("a") as fh:
        fh.write('{"id": "b", "metadata": [1]}\n')
    r = assay("run", str(p))
    assert r.returncode == 2 and "data.jsonl:2: metadata" in r.stderr


def test_bundled_example_runs():
    r = assay("run", str(ROOT / "examples" / "presets" / "eval.yaml"))
    assert r.returncode == 1, r.stderr          # the example fails two samples on purpose
    assert "4/6 passed" in r.stdout


def test_graders_lists_every_preset_with_schema():
    r = assay("graders", "--json")
    assert r.returncode == 0
    rows = {g["type"]: g for g in json.loads(r.stdout)}
    assert {"exact_match", "contains", "regex", "json_schema", "similarity", "code"} <= set(rows)
    assert rows["similarity"]["config_schema"]["properties"]["threshold"]["default"] == 0.8
    assert "schema" in rows["json_schema"]["config_schema"]["properties"]
    table = assay("graders")
    assert table.returncode == 0 and "similarity" in table.stdout


def test_human_review_updates_the_report(tmp_path):
    (tmp_path / "eval.yaml").write_text(textwrap.dedent("""\
        name: reviewed
        samples:
          - {id: a, output: "deployed with managed identity"}
        graders:
          - {type: contains, name: has-output, config: {}}
          - {type: human, name: expert, config: {instructions: "Check security", criteria: ["no secrets"]}}
        """))
    out = tmp_path / "r.jsonl"
    first = assay("run", str(tmp_path / "eval.yaml"), "--out", str(out))
    assert first.returncode == 1 and "0/1 passed" in first.stdout and "1 pending" in first.stdout
    bad = assay("review", str(out), "--sample", "a", "--grader", "has-output", "--pass")
    assert bad.returncode == 2 and "no human grader 'has-output'" in bad.stderr
    ok = assay("review", str(out), "--sample", "a", "--grader", "expert", "--pass", "--score", "0.9", "-m", "fine")
    assert ok.returncode == 0, ok.stderr + ok.stdout
    assert "1/1 passed" in ok.stdout
    report = assay("report", str(out), "--json")
    data = json.loads(report.stdout)
    assert report.returncode == 0 and data["passed"] == 1 and data["pending"] == 0
    assert out.read_text().count("\n") == 1          # the results file itself is never rewritten


def test_export_shapes(tmp_path):
    p = write_suite(tmp_path, [{"type": "contains"}], [{"id": "a", "output": "xy", "expected": "z"}])
    target = tmp_path / "waza.json"
    r = assay("run", str(p), "--export", "waza", "--export-path", str(target), "-q")
    assert r.returncode == 1
    [task] = json.loads(target.read_text())["tasks"]           # waza's EvaluationOutcome
    [run] = task["runs"]
    assert (task["test_id"], run["status"], run["final_output"]) == ("a", "failed", "xy")
    first = run["validations"]["contains"]
    assert first["feedback"] == "output does not contain 'z'" and first["passed"] is False
    target = tmp_path / "vally.json"
    r = assay("run", str(p), "--export", "vally", "--export-path", str(target), "-q")
    assert r.returncode == 1
    doc = json.loads(target.read_text())
    assert "output does not contain 'z'" in json.dumps(doc)
    r = assay("run", str(p), "--export", "promptfoo")
    assert r.returncode == 2 and "unknown format" in r.stderr


@pytest.mark.parametrize("suite, expected", [
    pytest.param("examples/waza-suite", "1/3 passed, 1 failed, 0 errors, 1 pending", marks=pytest.mark.node),
    pytest.param("examples/vally-stimuli/eval.yaml", "1/2 passed, 1 failed, 0 errors, 0 pending",
                 marks=pytest.mark.node),
    ("examples/json-schema/eval.yaml", "1/3 passed, 2 failed"),
    pytest.param("examples/code-evaluators/eval.yaml", "1/3 passed, 2 failed, 0 errors",
                 marks=pytest.mark.node_sandbox),
])
def test_bundled_suites_grade_end_to_end(tmp_path, suite, expected):
    out = tmp_path / "r.jsonl"
    r = assay("run", str(ROOT / suite), "--out", str(out))
    assert r.returncode == 1, r.stderr
    assert expected in r.stdout
    assert all(json.loads(line)["results"] for line in out.read_text().splitlines())


def test_killed_run_resumes_without_losing_or_duplicating(tmp_path):
    import os
    import signal
    import time

    rows = [{"id": f"s{i}", "output": "x" * (i % 7), "expected": "x"} for i in range(120)]
    code = "import time\ndef evaluate(i, o, e, m):\n    time.sleep(0.02)\n    return {'passed': len(o) > 2}\n"
    p = write_suite(tmp_path, [{"type": "code", "name": "slow", "config": {"code": code}}, {"type": "contains"}], rows)
    out = tmp_path / "r.jsonl"
    proc = subprocess.Popen([sys.executable, "-m", "assay.cli.main", "run", str(p), "--out", str(out), "-j", "1"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and (not out.exists() or out.read_text().count("\n") < 16):
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)         # the run and its sandbox, mid-way
    proc.wait()
    partial = out.read_text().count("\n")
    assert 16 <= partial < 120
    r = assay("run", str(p), "--out", str(out), "--resume", "-j", "4")
    assert r.returncode == 1, r.stderr
    assert f"{partial} resumed" in r.stdout
    ids = [json.loads(line)["id"] for line in out.read_text().splitlines()]
    assert sorted(ids) == sorted(row["id"] for row in rows)     # every sample once, none twice
    # the resumed run reports the whole file, exactly as `assay report` does
    assert "/120 passed" in r.stdout.splitlines()[-1]
    report = assay("report", str(out))
    assert report.stdout.splitlines()[-1].split(";")[0] in r.stdout.splitlines()[-1]


def test_resume_reports_the_whole_file_and_refuses_another_suites_file(tmp_path):
    rows = [{"id": f"s{i}", "output": "x", "expected": "x" if i % 3 else "y"} for i in range(9)]
    p = write_suite(tmp_path, [{"type": "exact_match"}], rows)
    out, junit, summary = tmp_path / "r.jsonl", tmp_path / "r.xml", tmp_path / "s.json"
    assert assay("run", str(p), "--out", str(out)).returncode == 1
    lines = out.read_text().splitlines(keepends=True)
    out.write_text("".join(lines[:4]))                      # as if the run had died after 4 samples
    r = assay("run", str(p), "--out", str(out), "--resume", "--junit", str(junit), "--summary-json", str(summary))
    assert r.returncode == 1, r.stderr
    assert "6/9 passed, 3 failed" in r.stdout and "4 resumed" in r.stdout
    assert ET.parse(junit).getroot().find("testsuite").get("tests") == "9"
    assert json.loads(summary.read_text())["total"] == 9
    # nothing left to do: the summary is still the whole file's, not "0/0 passed"
    again = assay("run", str(p), "--out", str(out), "--resume")
    assert again.returncode == 1 and "6/9 passed" in again.stdout
    other = write_suite(tmp_path / "other", [{"type": "contains"}], rows) if (tmp_path / "other").mkdir() is None \
        else None
    r = assay("run", str(other), "--out", str(out), "--resume")
    assert r.returncode == 2 and "written by another suite or grader set" in r.stderr
    assert "Traceback" not in r.stderr


@pytest.mark.parametrize("make_args, message", [
    (lambda t, p: ["--out", str(t)], "is a directory"),
    (lambda t, p: ["--out", str(t / "data.jsonl")], "would overwrite an input"),
    (lambda t, p: ["--junit", str(p)], "would overwrite an input"),
    (lambda t, p: ["--out", str(t / "x.jsonl"), "--junit", str(t / "x.jsonl")], "both write"),
    (lambda t, p: ["--junit", str(t / "data.jsonl" / "r.xml")], "r.xml"),
])
def test_bad_output_paths_exit_2_with_one_line(tmp_path, make_args, message):
    p = write_suite(tmp_path, [{"type": "contains"}], [{"id": "a", "output": "x", "expected": "x"}])
    before = (tmp_path / "data.jsonl").read_bytes()
    r = assay("run", str(p), *make_args(tmp_path, p))
    assert r.returncode == 2, r.stdout
    assert message in r.stderr and "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert (tmp_path / "data.jsonl").read_bytes() == before


def test_junit_is_well_formed_whatever_the_text(tmp_path):
    rows = [{"id": "ctl\u0001\u0000id", "output": "a\u0000b\u001b[31m\ud800", "expected": "zz\u000c"},
            {"id": "big", "output": "x" * 200_000, "expected": "y"}]
    (tmp_path / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    (tmp_path / "eval.yaml").write_text("name: ctl\ndataset: data.jsonl\ngraders: [{type: exact_match}]\n")
    junit, out = tmp_path / "r.xml", tmp_path / "r.jsonl"
    r = assay("run", str(tmp_path / "eval.yaml"), "--junit", str(junit), "--out", str(out))
    assert r.returncode == 1, r.stderr
    cases = ET.parse(junit).getroot().find("testsuite").findall("testcase")
    assert len(cases) == 2 and all(c.find("failure") is not None for c in cases)
    assert all(len(c.find("failure").get("message")) < 2000 for c in cases)
    assert [json.loads(line)["id"] for line in out.read_text().splitlines()][1] == "big"


@pytest.mark.parametrize("option", ["--out", "--junit", "--summary-json"])
def test_a_full_disk_is_one_line_naming_the_path(tmp_path, option):
    if not Path("/dev/full").exists():
        pytest.skip("no /dev/full")
    p = write_suite(tmp_path, [{"type": "contains"}], [{"id": "a", "output": "x", "expected": "x"}])
    r = assay("run", str(p), option, "/dev/full")
    assert r.returncode == 2
    assert r.stderr.strip().startswith("error: cannot write") and "/dev/full: No space left on device" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_relative_script_paths_resolve_against_the_suite_folder(tmp_path):
    suite_dir = tmp_path / "suite"
    (suite_dir / "graders").mkdir(parents=True)
    (suite_dir / "graders" / "ok.py").write_text(
        "import json, sys\nctx = json.load(sys.stdin)\nprint(json.dumps({'passed': ctx['output'] == 'x'}))\n")
    p = write_suite(suite_dir, [{"type": "script", "config": {"script": "graders/ok.py"}}],
                    [{"id": "a", "output": "x"}])
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    r = assay("run", str(p), cwd=elsewhere)
    assert r.returncode == 0, r.stdout + r.stderr


def test_settings_are_read_once_and_checked(tmp_path):
    p = write_suite(tmp_path, [{"type": "contains"}], [{"id": "a", "output": "x", "expected": "x"}])
    env = {**os.environ, "ASSAY_SANDBOX_ALLOW_WEAK": "maybe"}
    r = subprocess.run([sys.executable, "-m", "assay.cli.main", "run", str(p)], capture_output=True, text=True,
                       env=env, timeout=60)
    assert r.returncode == 2 and "ASSAY_SANDBOX_ALLOW_WEAK='maybe'" in r.stderr


def test_loader_warnings_are_in_the_summary_json_and_the_junit_report(tmp_path):
    (tmp_path / "tasks").mkdir()
    (tmp_path / "eval.yaml").write_text("name: w\nskill: s\nowner: team\ngraders:\n  - {type: contains, name: c}\n"
                                        "tasks: [tasks/*.yaml]\nconfig: {trials_per_task: 1, timeout_seconds: 60}\n")
    (tmp_path / "tasks" / "a.yaml").write_text("id: a\ninputs: {prompt: p, output: hi}\nexpected: hi\n")
    summary, junit = tmp_path / "s.json", tmp_path / "j.xml"
    r = assay("run", str(tmp_path), "--summary-json", str(summary), "--junit", str(junit), "-q",
              "--waza-version", "0.21")  # waza 0.24 on refuses unknown keys
    assert r.returncode == 0, r.stderr
    [warning] = json.loads(summary.read_text())["warnings"]
    assert "eval.yaml:3: owner: unknown field 'owner' ignored" in warning
    from xml.etree import ElementTree

    err = ElementTree.parse(junit).getroot().find("testsuite/system-err")
    assert err is not None and "unknown field 'owner'" in err.text
