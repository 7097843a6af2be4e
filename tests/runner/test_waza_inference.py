"""A waza suite with no release pinned is read as the newest release under which it loads
(runner/suites/dialects/_waza_inference.py), with one warning naming the release and what
decided it; --waza-version and the `waza_version` key still pin; --explain-dialect lists the
other releases and whether they grade alike. The command-line cases go through the installed
`assay` exactly as a user types them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from suite_files import load, write  # tests/suite_files.py

from assay.core.context import SpecContext
from assay.core.errors import SpecError
from assay.runner.suites import load_suite
from assay.runner.suites.dialects._waza_inference import rule_sets

ASSAY = Path(sys.executable).parent / "assay"
EVAL = "name: e\nskill: s\ntasks:\n  - tasks/*.yaml\n"
TASK = "id: t1\nname: T\ninputs:\n  prompt: deploy it\n  output: Deployed to Azure.\n"
# `keyword` is Go-only (so the Go edition, read by release) and was folded into `text` in 0.21
OLD = EVAL + "graders:\n  - type: keyword\n    name: g\n    config: {must_contain: [AZURE]}\n"




def test_one_release_of_each_rule_set_is_tried_newest_first():
    sets = rule_sets()
    assert sets[0] == "0.35.0" and sets[-1] == "0.12.0"
    assert "0.30.0" not in sets and "0.30.1" in sets  # 0.30.0 and 0.30.1 read suites alike


def test_a_suite_for_0_12_loads_without_flags_as_0_12(tmp_path):
    suite = load(write(tmp_path, {"eval.yaml": OLD, "tasks/a.yaml": TASK}))
    assert suite.graders[0].type == "waza_text"
    warning = suite.warnings[0]
    assert "read as waza 0.12.0" in warning and "`keyword`" in warning and "until 0.21.0" in warning
    assert "waza 0.21.0 refuses it" in warning and "eval.yaml:6" in warning
    assert any(line.startswith("release: waza 0.12.0, the newest release that loads it") for line in suite.explain)


def test_a_suite_valid_at_the_newest_is_read_as_the_newest_without_a_warning(tmp_path):
    text = EVAL + "graders:\n  - type: text\n    name: g\n    config: {contains: [azure]}\n"
    suite = load(write(tmp_path, {"eval.yaml": text, "tasks/a.yaml": TASK}))
    assert not any("read as waza" in w for w in suite.warnings)
    assert any(line.startswith("release: waza 0.35.0") for line in suite.explain)


def test_strict_decoding_sends_an_old_key_back_to_the_release_that_took_it(tmp_path):
    # `max_workers` became `workers` in 0.24, and 0.24 refuses unknown keys: read as 0.21
    text = EVAL + "config:\n  max_workers: 2\n"
    suite = load(write(tmp_path, {"eval.yaml": text, "tasks/a.yaml": TASK}))
    assert "read as waza 0.21.0" in suite.warnings[0] and "max_workers" in suite.warnings[0]


def test_a_pin_is_obeyed_and_refuses_as_before(tmp_path):
    path = write(tmp_path, {"eval.yaml": OLD, "tasks/a.yaml": TASK})
    with pytest.raises(SpecError, match="unsupported grader type at waza 0.35.0"):
        load(path, "0.35")
    path.write_text(OLD + "waza_version: '0.24'\n")
    with pytest.raises(SpecError, match="unsupported grader type at waza 0.24.0"):
        load(path)


def test_a_suite_no_release_loads_gets_the_newest_error_unchanged(tmp_path):
    text = EVAL + "graders:\n  - type: no_such_kind\n    name: g\n"
    with pytest.raises(SpecError) as exc:
        load(write(tmp_path, {"eval.yaml": text, "tasks/a.yaml": TASK}))
    assert "no_such_kind" in str(exc.value) and "0.12" not in str(exc.value)


def test_verdict_differences_between_releases_are_listed(tmp_path):
    task = TASK + "expected:\n  output_contains: [azure]\n"
    text = EVAL + "graders:\n  - type: text\n    name: g\n    config: {contains: [azure]}\n"
    suite = load_suite(write(tmp_path, {"eval.yaml": text, "tasks/a.yaml": task}), context=SpecContext(),
                       explain=True)
    tail = suite.explain[suite.explain.index("other releases (the newest that loads decides):") + 1:]
    assert any(line.startswith("  waza 0.26.0: loads, graders differ") and "_output_contains" in line for line in tail)
    assert any(line.startswith("  waza 0.34.0: loads, same graders") for line in tail)
    assert any(line.startswith("  waza 0.12.0: refuses it") for line in tail)


def _assay(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(ASSAY), *args], cwd=cwd, capture_output=True, text=True, timeout=60)


def test_the_command_line_warns_once_and_grades(tmp_path):
    write(tmp_path, {"eval.yaml": OLD, "tasks/a.yaml": TASK})
    done = _assay("run", "eval.yaml", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr.count("read as waza 0.12.0") == 1
    assert "1/1 passed" in done.stdout
    pinned = _assay("run", "eval.yaml", "--waza-version", "0.35", cwd=tmp_path)
    assert pinned.returncode == 2 and "unsupported grader type at waza 0.35.0" in pinned.stderr
    explained = _assay("run", "eval.yaml", "--explain-dialect", cwd=tmp_path)
    assert explained.returncode == 0 and "release: waza 0.12.0, the newest release that loads it" in explained.stdout


def test_a_go_only_kind_in_a_task_file_tells_the_edition_the_eval_file_did_not(tmp_path):
    # waza's own examples/grader-showcase at v0.12.0: `regex` in eval.yaml (a kind both editions
    # had), `action_sequence` (Go only) in a task file, read after the edition is guessed
    evalf = EVAL + "graders:\n  - {type: regex, name: r, config: {must_match: [Azure]}}\n"
    task = TASK + ("graders:\n  - name: seq\n    type: action_sequence\n    config: {matching_mode: in_order_match, "
                   "expected_actions: [view]}\n")
    suite = load(write(tmp_path, {"eval.yaml": evalf, "tasks/a.yaml": task}))
    assert "edition: Go (a task file names a grader kind only it has)" in suite.explain
    assert any(line.startswith("release: waza 0.12.0") for line in suite.explain)
    with pytest.raises(SpecError, match="unknown grader type 'nonsense'"):  # a kind neither has still fails
        load(write(tmp_path, {"eval.yaml": evalf, "tasks/a.yaml": task.replace("action_sequence", "nonsense")}))
