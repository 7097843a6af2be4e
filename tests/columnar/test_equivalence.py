"""The columnar path gives, row by row, the results the object path gives."""

from __future__ import annotations

import math

import pytest

pa = pytest.importorskip("pyarrow")

from generated import SPECS, mixed_rows, text_rows  # noqa: E402

import assay  # noqa: E402
from assay.core.aggregate import judge_sample  # noqa: E402
from assay.runner.columnar import _dispatch, contains  # noqa: E402

FIELDS = ("status", "passed", "score", "reason", "error")


def object_rows(spec, rows):
    """What the object path says, as the columnar path's columns name it."""
    return [{"status": r.status.value, "passed": r.passed, "score": r.score, "reason": r.reason,
             "error": None if r.error is None else r.error.value} for r in assay.grade_batch(spec, rows)]


def assert_same(got, want, rows, label=""):
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        g = {k: g[k] for k in FIELDS}
        if g != w:
            raise AssertionError(f"{label} row {i} {str(rows[i])[:300]}:\n columnar {g}\n object   {w}")


def table_of(rows):
    return pa.table({"id": [r["id"] for r in rows], "output": pa.array([r["output"] for r in rows], pa.string()),
                     "expected": pa.array([r["expected"] for r in rows], pa.string())})


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: f"{s['type']}{s.get('config', '')}"[:60])
def test_every_row_as_the_object_path_gives_it(spec, caplog):
    rows = text_rows()
    got = assay.grade_table(spec, table_of(rows)).to_pylist()
    assert not [r for r in caplog.records if r.name == "assay.runner.columnar"], "a kernel failed"
    assert [g["id"] for g in got] == [r["id"] for r in rows]
    assert_same(got, object_rows(spec, rows), rows, str(spec))


def test_the_dataset_reaches_every_outcome():
    """The generated rows are not all alike: each kind of grader both passes and fails rows,
    and some rows are errors (too long to compare), so the comparison above can fail."""
    rows = text_rows()
    for spec in ({"type": "exact_match"}, {"type": "contains"}, {"type": "regex", "config": {"pattern": "hello"}},
                 {"type": "json_schema", "config": {"schema": SPECS[16]["config"]["schema"]}}, {"type": "similarity"}):
        statuses = {r.status.value for r in assay.grade_batch(spec, rows)}
        assert {"passed", "failed"} <= statuses, spec
    errors = assay.grade_table({"type": "similarity", "config": {"max_length": 200}}, table_of(rows))["error"]
    assert "invalid_output" in errors.to_pylist()


@pytest.mark.parametrize("spec", SPECS[:7] + SPECS[16:17] + SPECS[19:20], ids=lambda s: s["type"])
def test_columns_that_are_not_text_take_the_object_path(spec):
    table = pa.table({"id": [str(i) for i in range(7)], "output": pa.array([42, 42, 1, 1, None, 3, 0], pa.int64()),
                      "expected": pa.array([42.0, 42.5, 1.0, None, 0.0, 3.5, None], pa.float64())})
    rows = table.to_pylist()
    assert_same(assay.grade_table(spec, table).to_pylist(), object_rows(spec, rows), rows, str(spec))


def test_a_suite_gives_each_grader_and_the_sample_verdict():
    rows = text_rows(300)
    specs = [{"type": "exact_match", "name": "exact", "weight": 2}, {"type": "contains", "name": "has"},
             {"type": "similarity", "name": "near", "weight": 0.5}, {"type": "regex", "name": "bt",
                                                                       "config": {"pattern": "(a)\\1"}}]
    per_grader = [assay.grade_batch(spec, rows) for spec in specs]
    for threshold in (None, 0.6):
        got = assay.grade_table(specs, table_of(rows), threshold=threshold).to_pylist()
        for i, row in enumerate(got):
            results = [results[i] for results in per_grader]
            want = judge_sample(rows[i]["id"], results, threshold=threshold)
            assert row["status"] == want.status.value and row["passed"] is want.passed
            assert row["score"] == want.score or (row["score"] is None and want.score is None)
            for spec, r in zip(specs, results):
                assert row[f"{spec['name']}.reason"] == r.reason and row[f"{spec['name']}.score"] == r.score


def test_sliced_and_chunked_columns(monkeypatch):
    """Arrow slices start part-way into their buffers; chunked columns are joined."""
    rows = text_rows(200)
    table = pa.concat_tables([table_of(rows[:77]), table_of(rows[77:])]).slice(13, 150)
    rows = rows[13:163]
    for spec in ({"type": "contains"}, {"type": "exact_match", "config": {"trim": True}}):
        assert_same(assay.grade_table(spec, table).to_pylist(), object_rows(spec, rows), rows)


def test_contains_without_the_c_helper(monkeypatch):
    monkeypatch.setattr(contains, "contains_rows", None)
    rows = text_rows(200)
    assert_same(assay.grade_table({"type": "contains"}, table_of(rows)).to_pylist(),
                object_rows({"type": "contains"}, rows), rows)


def test_the_c_helper_is_built():
    """The fast path is what the benchmark measures; a missing build would hide behind the fallback."""
    assert contains.contains_rows is not None


def test_a_failing_kernel_falls_back_to_the_object_path(monkeypatch):
    def broken(grader, frame, workers=1):
        raise RuntimeError("kernel bug")

    real = _dispatch.load_kernel
    monkeypatch.setattr(_dispatch, "load_kernel", lambda path: broken if "exact_match" in path else real(path))
    rows = text_rows(50)
    assert_same(assay.grade_table({"type": "exact_match"}, table_of(rows)).to_pylist(),
                object_rows({"type": "exact_match"}, rows), rows)


def test_mixed_values_through_grade_batch_agree_with_themselves():
    """Sanity for the run test below: the mixed rows do hold values that are not text."""
    rows = mixed_rows()
    assert any(not isinstance(r["output"], (str, type(None))) for r in rows)
    assert any(isinstance(r["expected"], float) and math.isfinite(r["expected"]) for r in rows)


def test_reasons_are_built_column_wise_and_the_rest_worded_by_the_grader():
    """Both ways of wording a reason are exercised by the comparisons above."""
    import numpy as np

    from assay.runner.columnar import _reasons

    rows = text_rows()
    table = table_of(rows)
    a, b = (table[name].combine_chunks().cast(pa.large_string()) for name in ("output", "expected"))
    for built in (_reasons.differ(a, b, np.arange(len(rows))), _reasons.missing(b, np.arange(len(rows)))):
        assert 0 < built[1].sum() < len(rows)
