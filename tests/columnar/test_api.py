"""``assay.grade_table``: what it takes, what it returns, and what happens without pyarrow."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

pa = pytest.importorskip("pyarrow")

import assay  # noqa: E402
from assay.core.errors import SpecError  # noqa: E402
from assay.runner import columnar  # noqa: E402
from assay.runner.columnar import _support  # noqa: E402

ROWS = {"id": ["a", "b", "c"], "output": ["北京是中国的首都", "hello", None], "expected": ["首都", "world", None]}


def test_one_spec_gives_the_five_columns_and_the_ids():
    got = assay.grade_table({"type": "contains"}, pa.table(ROWS))
    assert got.column_names == ["id", "status", "passed", "score", "reason", "error"]
    assert got["status"].to_pylist() == ["passed", "failed", "passed"]
    assert got["reason"].to_pylist() == [None, "output does not contain 'world'", None]
    assert got["error"].null_count == 3


def test_a_record_batch_and_a_table_without_ids():
    batch = pa.RecordBatch.from_pydict({"output": ["a", "b"], "expected": ["a", "c"]})
    got = assay.grade_table({"type": "exact_match"}, batch)
    assert got.column_names == ["status", "passed", "score", "reason", "error"]
    assert got["passed"].to_pylist() == [True, False]


def test_several_graders_are_named_and_judged():
    got = assay.grade_table([{"type": "exact_match", "name": "eq"}, {"type": "contains", "name": "in"}],
                            pa.table(ROWS), threshold=0.5)
    assert got.column_names[:3] == ["id", "eq.status", "eq.passed"]
    assert got["score"].to_pylist() == [0.5, 0.0, 1.0]
    assert got["status"].to_pylist() == ["passed", "failed", "passed"]


@pytest.mark.parametrize(("spec", "table", "message"), [
    ([{"type": "contains"}, {"type": "contains"}], pa.table(ROWS), "'contains' is given twice"),
    ({"type": "contains"}, pa.table({"answer": ["x"]}), "no `output` column"),
    ({"type": "contains"}, [{"output": "x"}], "takes a pyarrow Table"),
    ({"type": "nope"}, pa.table(ROWS), "unknown grader type"),
])
def test_mistakes_are_spec_errors(spec, table, message):
    with pytest.raises(SpecError, match=message):
        assay.grade_table(spec, table)


def test_pandas_and_polars_frames_go_through_arrow():
    frames = []
    for name in ("pandas", "polars"):
        try:
            module = __import__(name)
        except ImportError:
            continue
        frames.append(module.DataFrame(ROWS))
    if not frames:
        pytest.skip("neither pandas nor polars is installed")
    for frame in frames:
        assert assay.grade_table({"type": "contains"}, frame)["passed"].to_pylist() == [True, False, True]


def test_which_specs_have_kernels():
    from assay.core.spec import compile_spec

    assert _support.has_kernel(compile_spec({"type": "regex", "config": {"pattern": "a+"}}))
    assert not _support.has_kernel(compile_spec({"type": "regex", "config": {"pattern": "(a)\\1"}}))
    assert not _support.has_kernel(compile_spec({"type": "composite", "config": {"graders": [{"type": "contains"}]}}))


def test_without_pyarrow_the_object_path_runs(monkeypatch):
    monkeypatch.setattr(columnar, "available", lambda: False)
    assert columnar.path_in_use() == "object"
    with pytest.raises(SpecError, match=r"pip install 'assay\[arrow\]'"):
        assay.grade_table({"type": "contains"}, pa.table(ROWS))
    from assay.core.spec import compile_spec

    assert not columnar.has_kernel(compile_spec({"type": "contains"}))


def test_doctor_names_the_path():
    r = subprocess.run([sys.executable, "-m", "assay.cli.main", "doctor", "--json"], capture_output=True, text=True,
                       timeout=120)
    assert json.loads(r.stdout)["grading"]["path"] == "columnar", r.stderr


def test_the_trimmed_characters_are_pythons_whitespace():
    from assay.runner.columnar.exact_match import WHITESPACE

    assert WHITESPACE == "".join(chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace())
