"""`assay compare` and the intervals of `assay run`'s reports, as a user runs them: real
processes, results files written by `assay run`."""

from __future__ import annotations

import json
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from assay.core import stats

ROOT = Path(__file__).resolve().parents[2]


def assay(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "assay.cli.main", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=120)


@pytest.fixture(scope="module")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Base: 40 of 50 answers right; new: 12 of those 40 broken, 1 fixed; one sample each
    present in one run only."""
    tmp = tmp_path_factory.mktemp("compare")
    (tmp / "eval.yaml").write_text("name: cmp\ndataset: base.jsonl\ngraders:\n"
                                   "  - {type: exact_match, name: exact}\n  - {type: contains, name: has}\n")
    base = [{"id": f"q{i}", "output": f"answer {i}" if i < 40 else "wrong", "expected": f"answer {i}"}
            for i in range(50)]
    new = [dict(r, output="bad" if i < 12 else ("answer 45" if i == 45 else r["output"])) for i, r in enumerate(base)]
    base.append({"id": "old-only", "output": "a", "expected": "a"})
    new.append({"id": "new-only", "output": "a", "expected": "a"})
    for name, rows in (("base", base), ("new", new)):
        (tmp / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    for name in ("base", "new"):
        r = assay("run", str(tmp / "eval.yaml"), "-q", "--results", str(tmp / f"{name}.jsonl"),
                  "--out", str(tmp / f"{name}.results.jsonl"))
        assert r.returncode == 1, r.stderr
    return tmp


def test_compare_json_has_the_documented_shape_and_reference_numbers(two_runs: Path) -> None:
    r = assay("compare", str(two_runs / "base.results.jsonl"), str(two_runs / "new.results.jsonl"), "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["unpaired"] == {"base_only": ["old-only"], "new_only": ["new-only"]}
    exact = doc["graders"][0]
    assert exact["grader"] == "exact"
    assert (exact["base_pass_rate"], exact["new_pass_rate"]) == (0.8, pytest.approx(29 / 50))
    assert exact["to_fail"] == [f"q{i}" for i in range(12)] and exact["to_pass"] == ["q45"]
    assert exact["p_value"] == pytest.approx(stats.mcnemar_exact(12, 1))
    assert exact["delta_ci"] == pytest.approx(list(stats.paired_rate_interval(28, 12, 1, 9)))
    assert doc["overall"]["grader"] == "overall" and doc["overall"]["to_pass"] == ["q45"]


def test_fail_on_regression_gates_on_alpha(two_runs: Path) -> None:
    base, new = str(two_runs / "base.results.jsonl"), str(two_runs / "new.results.jsonl")
    fell = assay("compare", base, new, "--fail-on-regression")
    assert fell.returncode == 1 and "regression: pass rate fell with p < 0.05 (adjusted: holm) for exact, has, overall" in fell.stderr
    assert assay("compare", base, new, "--fail-on-regression", "--alpha", "0.001").returncode == 0
    assert assay("compare", new, base, "--fail-on-regression").returncode == 0  # the other way it improved
    table = assay("compare", base, new)
    assert table.returncode == 0 and "only in" in table.stdout and "q45" in table.stdout


def test_compare_refuses_a_damaged_file_in_one_line(two_runs: Path) -> None:
    bad = two_runs / "bad.jsonl"
    bad.write_text('{"id": "x", "status": "passed", "results": []}\nnot json\n{"id": "y"}\n')
    r = assay("compare", str(bad), str(two_runs / "new.results.jsonl"))
    assert r.returncode == 2 and r.stderr.startswith(f"error: {bad}:2: damaged line"), r.stderr
    missing = assay("compare", str(two_runs / "nope.jsonl"), str(two_runs / "new.results.jsonl"))
    assert missing.returncode == 2 and "nope.jsonl" in missing.stderr


def test_run_reports_carry_intervals(two_runs: Path) -> None:
    out = two_runs / "report"
    r = assay("run", str(two_runs / "eval.yaml"), "--results", str(two_runs / "base.jsonl"),
              "--summary-json", str(out.with_suffix(".json")), "--junit", str(out.with_suffix(".xml")))
    lo, hi = stats.wilson(41, 51)
    assert f"pass rate 80.4% [{lo * 100:.1f}, {hi * 100:.1f}]" in r.stdout
    summary = json.loads(out.with_suffix(".json").read_text())
    assert summary["pass_rate_ci"] == pytest.approx([lo, hi]) and summary["left_out"] == 0
    assert summary["graders"][0]["pass_rate_ci"] == pytest.approx(list(stats.wilson(41, 51)))
    props = {p.get("name"): p.get("value") for p in ET.parse(out.with_suffix(".xml")).iter("property")}
    assert float(props["pass_rate_ci_low"]) == pytest.approx(lo, abs=1e-6)
    assert float(props["grader.has.pass_rate_ci_high"]) == pytest.approx(hi, abs=1e-6)


def test_run_with_a_baseline_compares_after_the_run(two_runs: Path) -> None:
    args = ["run", str(two_runs / "eval.yaml"), "-q", "--results", str(two_runs / "new.jsonl"),
            "--baseline", str(two_runs / "base.results.jsonl")]
    plain = assay(*args)
    assert plain.returncode == 1 and "this run against" in plain.stdout  # the run's own code: samples failed
    gated = assay(*args, "--fail-on-regression")
    assert gated.returncode == 1 and "regression: pass rate fell" in gated.stderr
    improved = assay("run", str(two_runs / "eval.yaml"), "-q", "--results", str(two_runs / "base.jsonl"),
                     "--baseline", str(two_runs / "new.results.jsonl"), "--fail-on-regression")
    assert improved.returncode == 0, improved.stderr  # samples fail, but nothing got significantly worse
    assert assay("run", str(two_runs / "eval.yaml"), "--fail-on-regression").returncode == 2


def test_the_readme_comparison_of_two_prompts(tmp_path: Path) -> None:
    """The figures the README shows for examples/prompts."""
    suite = ROOT / "examples" / "prompts"
    for name in ("a", "b"):
        assay("run", str(suite / "eval.yaml"), "-q", "--results", str(suite / f"prompt-{name}.jsonl"),
              "--out", str(tmp_path / f"{name}.jsonl"))
    doc = json.loads(assay("compare", str(tmp_path / "a.jsonl"), str(tmp_path / "b.jsonl"), "--json").stdout)
    exact, names = doc["graders"]
    assert [round(x * 100, 1) for x in exact["delta_ci"]] == [52.3, 81.9] and exact["p_value"] < 0.001
    assert (names["base_pass_rate"], names["new_pass_rate"], names["p_value"]) == (0.8, 0.825, 1.0)
    assert [round(x * 100, 1) for x in names["delta_ci"]] == [-10.1, 15.3]
    assert (len(names["to_fail"]), len(names["to_pass"])) == (2, 3)
