"""`assay run` on the columnar path writes the lines the object path writes, reads Parquet
datasets, and resumes."""

from __future__ import annotations

import json
import subprocess
import sys

import orjson
import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from generated import SCHEMA, mixed_rows, text_rows  # noqa: E402

from assay.runner.columnar import MIN_ROWS, takes  # noqa: E402
from assay.runner.columnar import run as columnar_run  # noqa: E402
from assay.runner.local_engine import run as run_module  # noqa: E402
from assay.runner.results import verdict_line  # noqa: E402
from assay.runner.suites import load_suite  # noqa: E402

GRADERS = f"""graders:
  - {{type: exact_match, name: exact, weight: 2}}
  - {{type: contains, name: has, config: {{ignore_case: true}}}}
  - {{type: regex, name: re, config: {{pattern: "^h|北京", flags: im}}}}
  - {{type: regex, name: checks, config: {{must_match: ["\\\\d"], must_not_match: ["(?i)error"]}}}}
  - {{type: json_schema, name: schema, config: {{schema: {json.dumps(SCHEMA)}}}}}
  - {{type: similarity, name: near, weight: 0.5}}
  - {{type: similarity, name: words, config: {{algorithm: jaccard, threshold: 0.3, max_length: 2000}}}}
"""


def write_suite(tmp_path, rows, *, dataset="data.jsonl", threshold=None, name="eval.yaml"):
    if dataset.endswith(".parquet"):
        pq.write_table(pa.Table.from_pylist(rows), tmp_path / dataset)
    else:
        (tmp_path / dataset).write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    head = f"name: columnar\ndataset: {dataset}\n" + (f"threshold: {threshold}\n" if threshold is not None else "")
    (tmp_path / name).write_text(head + GRADERS)
    return tmp_path / name


def lines(verdicts):
    """Results lines as written, without the measured latency."""
    return [_without_latency(orjson.loads(verdict_line(v))) for v in verdicts]


def codes(verdicts):
    """Each result's reason code and arguments (results lines leave them out; the service's
    Ray workers store them)."""
    return [(v.id, r.name, r.reason_code, r.reason_args) for v in verdicts for r in v.results]


def _without_latency(row):
    for r in row["results"]:
        r.pop("latency_ms")
    return row


@pytest.mark.parametrize("threshold", [None, 0.7])
def test_the_columnar_run_writes_the_object_runs_lines(tmp_path, monkeypatch, threshold):
    suite = load_suite(write_suite(tmp_path, mixed_rows(), threshold=threshold))
    assert takes(suite)
    monkeypatch.setattr(run_module, "COLUMNAR_MIN_ROWS", 0)
    chunks = []
    real = columnar_run.grade_chunk
    monkeypatch.setattr(columnar_run, "grade_chunk", lambda *a: chunks.append(1) or real(*a))
    columnar = run_module.run_suite(suite, chunk_size=150)
    assert chunks, "the columnar path was not taken"
    chunks.clear()
    plain = run_module.run_suite(suite, chunk_size=150, columnar=False)
    assert not chunks
    assert lines(columnar.verdicts) == lines(plain.verdicts)
    assert codes(columnar.verdicts) == codes(plain.verdicts)
    statuses = {(r.name, r.status.value) for v in plain.verdicts for r in v.results}
    for grader in ("exact", "has", "re", "checks", "schema", "near", "words"):  # the comparison can fail
        assert {(grader, "passed"), (grader, "failed")} <= statuses
    said = {(r.name, r.reason_code) for v in plain.verdicts for r in v.results if r.reason_code}
    for grader in ("exact", "has", "re", "checks", "schema", "near", "words"):
        assert any(name == grader for name, _ in said), grader
    assert {("exact", "exact_match.differs_at"), ("has", "contains.missing"), ("checks", "regex.checks_passed"),
            ("schema", "json_schema.not_json")} <= said
    assert any(r.status.value == "error" for v in plain.verdicts for r in v.results)


def test_a_grader_without_a_kernel_takes_the_object_path_beside_the_kernels(tmp_path, monkeypatch):
    """One kernel-less grader (a regex needing backtracking) no longer takes the whole suite off
    the columnar path: the others run as kernels, it runs through grade_batch, and the lines
    are the object path's."""
    path = write_suite(tmp_path, text_rows(300))
    path.write_text(path.read_text() + "  - {type: regex, name: bt, config: {pattern: '(x)\\1'}}\n")
    suite = load_suite(path)
    assert takes(suite)
    from assay.runner.columnar import _dispatch

    kernels, objects = [], []
    real_load, real_many = _dispatch.load_kernel, _dispatch.grade_many
    monkeypatch.setattr(_dispatch, "load_kernel", lambda p: kernels.append(p) or real_load(p))
    monkeypatch.setattr(_dispatch, "grade_many", lambda g, rows, **k: objects.append(g.name) or real_many(g, rows, **k))
    monkeypatch.setattr(run_module, "COLUMNAR_MIN_ROWS", 0)
    columnar = run_module.run_suite(suite, chunk_size=100)
    assert any(p.endswith("exact_match:grade") for p in kernels)
    assert "bt" in objects and "exact" not in objects
    plain = run_module.run_suite(suite, chunk_size=100, columnar=False)
    assert lines(columnar.verdicts) == lines(plain.verdicts)
    assert codes(columnar.verdicts) == codes(plain.verdicts)
    assert sum(r.name == "bt" for v in columnar.verdicts for r in v.results) == 300


def test_no_kernel_at_all_keeps_the_object_path(tmp_path):
    path = tmp_path / "eval.yaml"
    (tmp_path / "data.jsonl").write_text('{"output": "a"}\n')
    path.write_text("name: bt\ndataset: data.jsonl\ngraders:\n  - {type: regex, config: {pattern: '(a)\\1'}}\n")
    assert not takes(load_suite(path))


def assay(*args, cwd):
    return subprocess.run([sys.executable, "-m", "assay.cli.main", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=300)


def results_file(path):
    rows = [json.loads(line) for line in path.read_bytes().splitlines()]
    fingerprints = {r.pop("fingerprint") for r in rows}
    assert len({json.dumps(r.pop("grader_fingerprints"), sort_keys=True) for r in rows}) <= 1  # one suite's graders
    return sorted((_without_latency(r) for r in rows), key=lambda r: r["id"]), fingerprints


def test_a_parquet_dataset_runs_columnar_and_resumes(tmp_path):
    rows = text_rows(MIN_ROWS + 500, seed=3)
    jsonl = write_suite(tmp_path, rows, name="a.yaml")
    parquet = write_suite(tmp_path, rows, dataset="data.parquet", name="b.yaml")
    r = assay("run", str(parquet), "--out", "b.jsonl", "-q", cwd=tmp_path)
    assert r.returncode in (0, 1), r.stderr
    got, fingerprints = results_file(tmp_path / "b.jsonl")
    assert len(got) == len(rows) and len(fingerprints) == 1
    plain = run_module.run_suite(load_suite(jsonl), columnar=False)
    assert got == sorted(lines(plain.verdicts), key=lambda r: r["id"])

    # cut the file part-way (a torn last line), then resume: every sample once, same lines
    written = (tmp_path / "b.jsonl").read_bytes().splitlines(keepends=True)
    (tmp_path / "b.jsonl").write_bytes(b"".join(written[:2000]) + written[2000][:40])
    r = assay("run", str(parquet), "--out", "b.jsonl", "--resume", "-q", cwd=tmp_path)
    assert r.returncode in (0, 1), r.stderr
    resumed, again = results_file(tmp_path / "b.jsonl")
    assert resumed == got and again == fingerprints


def test_a_parquet_dataset_loads_into_samples(tmp_path):
    path = tmp_path / "d.parquet"
    pq.write_table(pa.table({"id": [1, 2], "output": ["a", None], "expected": [None, "b"], "lang": ["en", "zh"]}),
                   path)
    from assay.runner.dataset import load_dataset

    a, b = load_dataset(path)
    assert (a.id, a.output, a.expected, a.metadata) == ("1", "a", None, {"lang": "en"})
    assert (b.id, b.output, b.expected) == ("2", None, "b")


def test_a_damaged_parquet_file_is_a_spec_error(tmp_path):
    from assay.core.errors import SpecError
    from assay.runner.dataset import load_dataset

    path = tmp_path / "d.parquet"
    path.write_bytes(b"PAR1 not really")
    with pytest.raises(SpecError, match="cannot read Parquet dataset"):
        load_dataset(path)


def test_reason_codes_without_the_c_helper(tmp_path, monkeypatch):
    """Without the C helper every reason is worded by the grader's own functions: the same
    codes as well."""
    from assay.runner.columnar import _reasons

    monkeypatch.setattr(_reasons, "first_difference", None)
    monkeypatch.setattr(_reasons, "slice_chars", None)
    monkeypatch.setattr(run_module, "COLUMNAR_MIN_ROWS", 0)
    suite = load_suite(write_suite(tmp_path, text_rows(300)))
    columnar = run_module.run_suite(suite, chunk_size=100)
    plain = run_module.run_suite(suite, chunk_size=100, columnar=False)
    assert codes(columnar.verdicts) == codes(plain.verdicts)
    assert any(code == "exact_match.differs_at" for *_, code, _ in codes(plain.verdicts))
