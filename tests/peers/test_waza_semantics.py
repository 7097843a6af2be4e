"""waza's loader and runner semantics that no single grader shows, each read from waza's Go
source (microsoft/waza; the file and commit are named on each case) and matched by assay's waza
dialect (runner/suites/dialects/_waza_semantics.py, _waza_inference.py)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from suite_files import load, write  # tests/suite_files.py

from assay.core.errors import SpecError
from assay.runner.execute import grade_one
from assay.runner.resources import default_resources

ASSAY = Path(sys.executable).parent / "assay"
CONFIG = "config: {trials_per_task: 1, timeout_seconds: 60}\n"
EVAL = "name: e\nskill: s\ntasks: [tasks/*.yaml]\n" + CONFIG
TASK = "id: t1\nname: T\ninputs:\n  prompt: deploy it\n  output: Deployed to Azure.\n"




def graded(suite, sample_id: str):
    sample = next(s for s in suite.samples if s.id == sample_id)
    return {spec.name: grade_one(spec.build(default_resources()), sample) for spec in suite.graders_for(sample_id)}


# -- internal/models/spec.go BenchmarkSpec.Validate (v0.9.0 and v0.12.0 tags, 091a1f9e, 0e7150c3) --

@pytest.mark.parametrize("config, words", [
    ("", "trials_per_task must be at least 1, got 0"),
    ("config: {timeout_seconds: 60}\n", "trials_per_task must be at least 1, got 0"),
    ("config: {trials_per_task: 0, timeout_seconds: 60}\n", "trials_per_task must be at least 1, got 0"),
    ("config: {trials_per_task: 2}\n", "timeout_seconds must be at least 1, got 0"),
])
def test_waza_requires_trials_and_timeout_and_says_so_in_its_words(tmp_path, config, words):
    text = "name: e\nskill: s\ntasks: [tasks/*.yaml]\n" + config
    if "trials_per_task: 0" in config:  # assay's own model refuses a trial count below 1 outright
        with pytest.raises(SpecError, match="trials_per_task"):
            load(write(tmp_path, {"eval.yaml": text, "tasks/a.yaml": TASK}))
        return
    suite = load(write(tmp_path, {"eval.yaml": text, "tasks/a.yaml": TASK}))
    [warning] = [w for w in suite.warnings if "waza (Go) refuses this suite" in w]
    assert f"({words})" in warning and warning.startswith(str(tmp_path / "eval.yaml"))


def test_a_suite_with_both_settings_has_no_such_warning(tmp_path):
    assert load(write(tmp_path, {"eval.yaml": EVAL, "tasks/a.yaml": TASK})).warnings == []


# -- internal/graders/run.go RunAll (0a694334): results in a map keyed by grader name -----------

def test_a_task_grader_replaces_the_suite_grader_of_its_name_for_that_task_only(tmp_path):
    suite_grader = "graders:\n  - {type: text, name: same, config: {contains: [azure]}}\n"
    replacing = TASK + "graders:\n  - {type: text, name: same, config: {contains: [nothere]}}\n"
    other = TASK.replace("t1", "t2")
    suite = load(write(tmp_path, {"eval.yaml": EVAL + suite_grader, "tasks/a.yaml": replacing, "tasks/b.yaml": other}))
    t1, t2 = graded(suite, "t1"), graded(suite, "t2")
    assert list(t1) == ["same"] and not t1["same"].passed  # the task's, alone: score 0, as waza scores it
    assert list(t2) == ["same"] and t2["same"].passed      # the suite's, for the task that does not replace it


def test_the_command_line_scores_the_surviving_results_only(tmp_path):
    suite_grader = ("graders:\n  - {type: text, name: same, config: {contains: [azure]}}\n"
                    "  - {type: text, name: kept, config: {contains: [deployed]}}\n")
    task = TASK + "graders:\n  - {type: text, name: same, config: {contains: [nothere]}}\n"
    write(tmp_path, {"eval.yaml": EVAL + suite_grader, "tasks/a.yaml": task})
    out = tmp_path / "out.jsonl"
    done = subprocess.run([str(ASSAY), "run", "eval.yaml", "--out", str(out), "-q"], cwd=tmp_path,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1, done.stderr
    [record] = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(r["name"] for r in record["results"]) == ["kept", "same"]
    assert record["score"] == pytest.approx(0.5)  # (kept 1 + the task's same 0) / 2, not (1 + 1 + 0) / 3


# -- internal/models/testcase.go LoadTestCase: yaml.Unmarshal (091a1f9e), Decoder.Decode (0e7150c3) --

def test_a_task_file_is_read_to_its_first_document(tmp_path):
    task = TASK + "---\nid: t2\nname: never read\n"
    suite = load(write(tmp_path, {"eval.yaml": EVAL, "tasks/a.yaml": task}))
    assert [s.id for s in suite.samples] == ["t1"]
    [warning] = suite.warnings
    assert warning.startswith(f"{tmp_path / 'tasks' / 'a.yaml'}:6: a second YAML document starts here; it is ignored")


def test_the_eval_file_is_read_to_its_first_document_too(tmp_path):
    suite = load(write(tmp_path, {"eval.yaml": EVAL + "---\nname: other\n", "tasks/a.yaml": TASK}))
    assert suite.name == "e" and "a second YAML document starts here" in suite.warnings[0]


def test_other_dialects_and_the_python_edition_still_refuse_a_second_document(tmp_path):
    with pytest.raises(SpecError, match="a second document starts here") as exc:
        load(write(tmp_path, {"eval.yaml": "name: a\ngraders: []\nsamples: []\n---\nname: b\n"}))
    assert exc.value.where.endswith("eval.yaml:4")
    python = EVAL + "graders:\n  - {type: regex, name: r, config: {must_match: [x]}}\n"
    with pytest.raises(SpecError, match="a second document starts here"):
        load(write(tmp_path, {"eval.yaml": python, "tasks/a.yaml": TASK + "---\nid: t2\n"}))


# -- per-release refusals, without a pin: the newest release that loads decides -----------------

@pytest.mark.parametrize("grader, release, decided_by", [
    # internal/graders/regex_grader.go, keyword_grader.go at v0.12.0 (c3cff151); folded into text by 33c7bc75
    ("{type: keyword, name: g, config: {must_contain: [azure]}}", "0.12.0", "`keyword`"),
    # internal/graders/text_grader.go since 33c7bc75 (0.21): text is read by the newest release
    ("{type: text, name: g, config: {contains: [azure]}}", "0.35.0", None),
    # internal/models/spec.go Config `workers` (0.24, CHANGELOG.md): max_workers is refused from then
    (None, "0.21.0", "config `workers` (was `max_workers`)"),
])
def test_each_release_refusal_sends_the_suite_to_the_release_that_read_it(tmp_path, grader, release, decided_by):
    text = EVAL.replace("timeout_seconds: 60}", "timeout_seconds: 60, max_workers: 2}") if grader is None else \
        EVAL + f"graders:\n  - {grader}\n"
    suite = load(write(tmp_path, {"eval.yaml": text, "tasks/a.yaml": TASK}))
    assert any(line.startswith(f"release: waza {release}") for line in suite.explain)
    inferred = [w for w in suite.warnings if "read as waza" in w]
    if decided_by is None:
        assert inferred == []
    else:
        assert len(inferred) == 1 and f"read as waza {release}" in inferred[0] and decided_by in inferred[0]
