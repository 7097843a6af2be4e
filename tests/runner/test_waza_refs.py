"""waza grader references (runner/suites/dialects/_waza_refs.py): a local grader file inside the
suite is read and the entry beside `ref` applied over it; a remote reference, an absolute path or
one leading outside the suite is an error naming file, line and field; nothing is fetched."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from assay.core.context import SpecContext
from assay.core.errors import SpecError
from assay.runner.execute import grade_one
from assay.runner.resources import default_resources
from assay.runner.suites import load_suite
from assay.runner.suites.dialects._waza_refs import deep_merge, is_remote

EVAL = "name: e\nskill: s\ntasks: [tasks/*.yaml]\ngraders:\n"
TASK = "id: t1\nname: T\ninputs:\n  prompt: deploy it\n  output: Deployed to Azure.\n"
LINT = "type: text\nname: lint\nweight: 3\nconfig:\n  contains: [azure]\n  not_contains: [error]\n"


def write(tmp: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        (tmp / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp / name).write_text(text)
    return tmp / "eval.yaml"


def load(path: Path):
    return load_suite(path, context=SpecContext())


def test_a_local_ref_reads_the_grader_file_and_the_entry_overrides_it(tmp_path):
    path = write(tmp_path, {"eval.yaml": EVAL + "  - {ref: ./graders/lint.yaml, name: mine, weight: 2,"
                                                " config: {contains: [deployed]}}\n",
                            "graders/lint.yaml": LINT, "tasks/a.yaml": TASK})
    suite = load(path)
    spec = suite.graders[0]
    assert (spec.name, spec.type, spec.weight) == ("mine", "waza_text", 2.0)
    assert spec.config.contains == ["deployed"] and spec.config.not_contains == ["error"]
    assert (tmp_path / "graders" / "lint.yaml").resolve() in suite.inputs
    result = grade_one(spec.build(default_resources()), suite.samples[0])
    assert result.passed


def test_deep_merge_merges_mappings_and_replaces_lists():
    assert deep_merge({"a": {"x": 1, "y": [1]}, "b": 2}, {"a": {"y": [2]}, "c": 3}) == \
        {"a": {"x": 1, "y": [2]}, "b": 2, "c": 3}


@pytest.mark.parametrize("ref, remote", [
    ("github.com/waza-evals/fact@v1.0.3", True), ("https://example.com/g.yaml", True),
    ("graders/lint.yaml@v1", True), ("gitlab.example.com/a/b", True),
    ("./graders/lint.yaml", False), ("graders/lint.yaml", False), ("lint.yaml", False), ("../x.yaml", False)])
def test_what_counts_as_remote(ref, remote):
    assert is_remote(ref) is remote


@pytest.mark.parametrize("ref, message", [
    ("github.com/waza-evals/fact@v1.0.3", "is remote .* assay never fetches graders"),
    ("/etc/passwd", "must be relative to the suite's directory"),
    ("../outside.yaml", "leads outside the suite's directory"),
    ("./graders/missing.yaml", "no such grader file"),
    ("./graders/link.yaml", "leads outside the suite's directory"),
])
def test_bad_refs_are_errors_naming_file_line_and_field(tmp_path, ref, message):
    suite_dir = tmp_path / "suite"
    (tmp_path / "outside.yaml").write_text(LINT)
    path = write(suite_dir, {"eval.yaml": EVAL + f"  - name: g\n    ref: {ref}\n", "tasks/a.yaml": TASK})
    (suite_dir / "graders").mkdir()
    os.symlink(tmp_path / "outside.yaml", suite_dir / "graders" / "link.yaml")  # inside by name, outside in fact
    with pytest.raises(SpecError, match=message) as exc:
        load(path)
    assert exc.value.where == f"{path}:6" and exc.value.path == "graders[0].ref"


@pytest.mark.parametrize("content, message, line", [
    ("- a list\n", "must hold one grader entry", 1),
    ("name: x\nconfig: {}\n", "needs a type", 1),
    ("type: text\nname: x\nref: ./other.yaml\n", "may not itself use ref", 3),
])
def test_a_malformed_grader_file_is_an_error_in_that_file(tmp_path, content, message, line):
    path = write(tmp_path, {"eval.yaml": EVAL + "  - {ref: ./g.yaml}\n", "g.yaml": content, "tasks/a.yaml": TASK})
    with pytest.raises(SpecError, match=message) as exc:
        load(path)
    assert exc.value.where == f"{tmp_path / 'g.yaml'}:{line}"


def test_the_type_of_a_referenced_grader_cannot_be_changed(tmp_path):
    path = write(tmp_path, {"eval.yaml": EVAL + "  - {ref: ./g.yaml, type: prompt}\n", "g.yaml": LINT,
                            "tasks/a.yaml": TASK})
    with pytest.raises(SpecError, match="cannot override the referenced grader's type 'text'"):
        load(path)
