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


def _results(path: Path, rows: list[tuple[str, dict[str, bool]]], cluster: bool = False,
             fingerprint: str = "f") -> Path:
    """A results file of hand-made verdicts: (sample id, {grader: passed})."""
    from assay.core.aggregate import judge_sample
    from assay.core.result import Status, make_result
    from assay.runner.results import verdict_line

    lines = []
    for sid, outcomes in rows:
        v = judge_sample(sid, [make_result(g, "exact_match", "code", Status.PASSED if ok else Status.FAILED, ok,
                                           float(ok), reason=None if ok else f"{g} differs", details={}, error=None,
                                           weight=1.0) for g, ok in outcomes.items()])
        v.cluster = sid.split("#")[0] if cluster else None
        lines.append(verdict_line(v, fingerprint))
    path.write_bytes(b"".join(lines))
    return path


def test_a_comparison_of_nothing_exits_2_with_the_reason(tmp_path: Path) -> None:
    some = _results(tmp_path / "some.jsonl", [(f"q{i}", {"a": True}) for i in range(5)])
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    others = _results(tmp_path / "others.jsonl", [(f"z{i}", {"a": True}) for i in range(5)])
    renamed = _results(tmp_path / "renamed.jsonl", [(f"q{i}", {"b": True}) for i in range(5)])
    for base, new, why in ((empty, some, f"{empty} holds no graded samples"),
                           (some, empty, f"{empty} holds no graded samples"),
                           (some, others, "no sample is in both runs"),
                           (some, renamed, "no grader is in both runs")):
        r = assay("compare", str(base), str(new), "--fail-on-regression")
        assert r.returncode == 2 and f"nothing to compare: {why}" in r.stderr and "--allow-empty" in r.stderr, r.stderr
        allowed = assay("compare", str(base), str(new), "--fail-on-regression", "--allow-empty")
        assert allowed.returncode == 0 and f"warning: nothing to compare: {why}" in allowed.stderr
    both = assay("compare", str(some), str(renamed), "--allow-empty")
    assert f"only in {some} (not compared): a" in both.stdout and f"only in {renamed} (not compared): b" in both.stdout


def test_margin_gates_on_non_inferiority(two_runs: Path) -> None:
    base, new = str(two_runs / "base.results.jsonl"), str(two_runs / "new.results.jsonl")
    doc = json.loads(assay("compare", base, new, "--json").stdout)
    lowest = min(g["delta_ci"][0] for g in [*doc["graders"], doc["overall"]]) * 100  # about -33 points
    wide = assay("compare", base, new, "--fail-on-regression", "--margin", f"{-lowest + 0.1:.2f}")
    assert wide.returncode == 0, wide.stderr
    narrow = assay("compare", base, new, "--fail-on-regression", "--margin", f"{-lowest - 0.1:.2f}")
    assert narrow.returncode == 1 and "regression: a drop of" in narrow.stderr and "is not ruled out" in narrow.stderr
    same = assay("compare", base, base, "--fail-on-regression", "--margin", "20")  # nothing changed, 50 pairs
    assert same.returncode == 0, same.stderr
    assert assay("compare", base, base, "--fail-on-regression", "--margin", "2").returncode == 1  # too few pairs


def _on_a_terminal(*args: str, columns: int = 80, cwd: Path | None = None) -> str:
    """What `assay` prints on a terminal ``columns`` wide (a pseudo-terminal), colours removed."""
    import fcntl
    import os
    import pty
    import re
    import struct
    import termios

    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))
    proc = subprocess.Popen([sys.executable, "-m", "assay.cli.main", *args], stdout=follower, stderr=subprocess.PIPE,
                            cwd=cwd, env={k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")})
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    proc.wait(timeout=120)
    os.close(leader)
    return re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", b"".join(chunks).decode()).replace("\r\n", "\n")


def test_at_80_columns_every_figure_is_whole_and_the_footnotes_name_the_test(tmp_path: Path) -> None:
    from assay.runner import figures

    base = _results(tmp_path / "base.jsonl", [(f"task{i}#{k}", {"exact": i % 3 > 0 or k == 0, "old": True})
                                              for i in range(40) for k in range(2)], cluster=True)
    new = _results(tmp_path / "new.jsonl", [(f"task{i}#{k}", {"exact": i % 4 > 0, "fresh": True})
                                            for i in range(40) for k in range(2)], cluster=True)
    # the files by their names, as a user in their folder types them (a long temporary path
    # would be folded at 80 columns, as any too-long word is)
    doc = json.loads(assay("compare", base.name, new.name, "--json", cwd=tmp_path).stdout)
    shown = _on_a_terminal("compare", base.name, new.name, cwd=tmp_path)
    base, new = Path(base.name), Path(new.name)
    assert max(len(line) for line in shown.splitlines()) <= 80 and "…" not in shown
    flat = " ".join(shown.split())
    for g in [*doc["graders"], doc["overall"]]:
        if g["present"] == "both":
            for figure in (figures.delta(g["delta"], g["delta_ci"]), figures.p_value(g["p_value_adjusted"]),
                           figures.delta(g["score_delta"], g["score_delta_ci"], percent=False),
                           f"±{g['detectable'] * 100:.1f} pts"):
                assert figure in flat, figure
    assert doc["graders"][0]["test"] == "sign"
    assert "p: sign test over tasks on the change in each task's pass rate (tasks graded several times) (exact, " \
           "samples)." in flat
    assert f"only in {base} (not compared): old" in flat and f"only in {new} (not compared): fresh" in flat
    assert "Holm's step-down correction over 2 comparisons (1 grader and the samples' verdicts)" in flat
    wide = _on_a_terminal("compare", str(base), str(new), columns=200, cwd=tmp_path)
    assert "┃ grader" in wide  # wide enough: the table, a row a grader


def test_a_grader_configured_differently_is_named(two_runs: Path, tmp_path: Path) -> None:
    changed = tmp_path / "eval.yaml"
    changed.write_text((two_runs / "eval.yaml").read_text().replace("{type: exact_match, name: exact}",
                                                                    "{type: exact_match, name: exact, "
                                                                    "config: {ignore_case: true}}"))
    (tmp_path / "base.jsonl").write_text((two_runs / "base.jsonl").read_text())
    r = assay("run", str(changed), "-q", "--results", str(tmp_path / "base.jsonl"), "--out", str(tmp_path / "out.jsonl"))
    assert r.returncode == 1, r.stderr
    base, new = str(two_runs / "base.results.jsonl"), str(tmp_path / "out.jsonl")
    doc = json.loads(assay("compare", base, new, "--json").stdout)
    assert {g["grader"]: g["config_changed"] for g in doc["graders"]} == {"exact": True, "has": False}
    shown = assay("compare", base, new).stdout
    assert "warning: grader 'exact' is configured differently in the two runs" in " ".join(shown.split())
    same = json.loads(assay("compare", base, str(two_runs / "new.results.jsonl"), "--json").stdout)
    assert not any(g["config_changed"] for g in same["graders"])
