"""`assay compare` and `assay report` on runs promptfoo and Inspect AI wrote (issue 37, item 9),
through the installed command, on the committed runs in tests/peers/foreign/runs/ (made by the
real tools: tests/peers/foreign/README.md). Each answer is checked against what the tool itself
counted in the same file (promptfoo's ``stats``, Inspect's metrics), and the flips against what
the fixture provider and solver were made to change."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import orjson
import pytest
from refusals import refused  # tests/refusals.py

ASSAY = Path(sys.executable).parent / "assay"
RUNS = Path(__file__).resolve().parents[1] / "peers" / "foreign" / "runs"


def assay(*args: str | Path, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ASSAY_")} | {"COLUMNS": "200"}
    return subprocess.run([str(ASSAY), *map(str, args)], capture_output=True, text=True, cwd=cwd, env=env,
                          timeout=120)


def vars_key(question: str) -> str:
    """A test without a description, as promptfoo tells tests apart (vars and strategy)."""
    key = {"vars": {"question": question}, "strategyId": "none"}
    return "vars:" + hashlib.sha256(orjson.dumps(key, option=orjson.OPT_SORT_KEYS)).hexdigest()[:12]


def compared(base: Path, new: Path) -> dict:
    done = assay("compare", base, new, "--json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def by_grader(doc: dict) -> dict[str, dict]:
    return {g["grader"]: g for g in doc["graders"]}


def test_compare_two_promptfoo_runs_pairs_tests_and_names_the_flips() -> None:
    doc = compared(RUNS / "promptfoo_a.json", RUNS / "promptfoo_b.json")
    overall = doc["overall"]
    assert overall["pairs"] == 11 and overall["left_out"] == 1  # "reverse a word": the provider failed in b
    assert sorted(overall["to_fail"]) == ["a prime", "capital of Japan", "sky colour, case sensitive"]
    assert sorted(overall["to_pass"]) == sorted(["JSON greeting", "boiling point", vars_key("3 * 7?")])
    assert doc["unpaired"] == {"base_only": [], "new_only": []}
    graders = by_grader(doc)
    assert graders["equals"]["to_fail"] == ["capital of Japan"]
    assert graders["equals"]["to_pass"] == [vars_key("3 * 7?")]
    assert graders["javascript:primality"]["to_fail"] == ["a prime"]
    assert graders["javascript:brevity"]["pairs"] == 11 and graders["javascript:brevity"]["delta"] == 0
    reasons = {f["id"]: f["new_reason"] for f in overall["flips"] if f["direction"] == "to_fail"}
    assert 'Expected output "Kyoto" to equal "Tokyo"' in reasons["capital of Japan"]


def test_compare_promptfoo_table_reads_like_assays_own() -> None:
    done = assay("compare", RUNS / "promptfoo_a.json", RUNS / "promptfoo_b.json")
    assert done.returncode == 0, done.stderr
    assert "paired by sample id" in done.stdout and "McNemar" in done.stdout
    assert "passed in base, failed in new (3):" in done.stdout
    assert "left out: 1 paired samples errored" in done.stdout


@pytest.mark.parametrize("name", ["promptfoo_a.json", "promptfoo_b.json"])
def test_report_on_a_promptfoo_run_counts_what_promptfoo_counted(name: str) -> None:
    stats = json.loads((RUNS / name).read_text())["results"]["stats"]
    done = assay("report", RUNS / name, "--json")
    assert done.returncode == 1, done.stderr  # some tests failed: the same exit as for assay's own runs
    doc = json.loads(done.stdout)
    assert (doc["passed"], doc["failed"], doc["errors"]) == (stats["successes"], stats["failures"], stats["errors"])
    graders = {g["name"]: g for g in doc["graders"]}
    assert graders["equals"]["type"] == "promptfoo:equals"
    assert graders["javascript:brevity"]["total"] == doc["total"] == 12


@pytest.mark.parametrize("suffix", ["eval", "json"])
def test_compare_two_inspect_logs_pairs_samples_over_epochs(suffix: str) -> None:
    doc = compared(RUNS / f"inspect_a.{suffix}", RUNS / f"inspect_b.{suffix}")
    overall = doc["overall"]
    # Tasks are paired (two epochs each); "reverse" errored in both epochs of b.
    assert overall["pairs"] == 9 and overall["left_out"] == 1
    assert sorted(overall["to_fail"]) == ["japan", "prime"] and overall["to_pass"] == ["product"]
    graders = by_grader(doc)
    assert set(graders) == {"match", "includes", "brevity"}
    assert graders["brevity"]["base_pass_rate"] == pytest.approx(8 / 9)
    done = assay("compare", RUNS / f"inspect_a.{suffix}", RUNS / f"inspect_b.{suffix}")
    assert done.returncode == 0 and "passed in base, failed in new (2):" in done.stdout, done.stderr


@pytest.mark.parametrize("name", ["inspect_a.eval", "inspect_b.eval", "inspect_a.json", "inspect_b.json"])
def test_report_on_an_inspect_log_matches_inspects_own_metrics(name: str) -> None:
    path = RUNS / name
    if name.endswith(".json"):
        header = json.loads(path.read_text())
    else:
        header = None  # the committed logs are zstd-compressed: read the header through the product
    done = assay("report", path, "--json")
    assert done.returncode == 1, done.stderr
    doc = json.loads(done.stdout)
    graders = {g["name"]: g for g in doc["graders"]}
    assert doc["clusters"] == 10 - (name.startswith("inspect_b")) and doc["repeats"]["k"] == 2
    assert graders["match"]["type"] == "inspect:match"
    if header is not None:
        metrics = {s["name"]: s["metrics"] for s in header["results"]["scores"]}
        assert graders["match"]["mean_score"] == pytest.approx(metrics["match"]["accuracy"]["value"])
        assert graders["includes"]["mean_score"] == pytest.approx(metrics["includes"]["accuracy"]["value"])
        assert graders["brevity"]["mean_score"] == pytest.approx(metrics["brevity"]["mean"]["value"])


def test_eval_and_json_logs_of_one_run_agree() -> None:
    a = compared(RUNS / "inspect_a.eval", RUNS / "inspect_b.eval")
    b = compared(RUNS / "inspect_a.json", RUNS / "inspect_b.json")
    assert a == b


def test_formats_are_told_apart_by_content_not_by_name(tmp_path: Path) -> None:
    shutil.copy(RUNS / "promptfoo_a.json", tmp_path / "base.jsonl")
    shutil.copy(RUNS / "inspect_b.eval", tmp_path / "new.results")
    done = assay("report", tmp_path / "base.jsonl", "--json")
    assert done.returncode == 1 and json.loads(done.stdout)["total"] == 12, done.stderr
    done = assay("report", tmp_path / "new.results", "--json")
    assert done.returncode == 1 and json.loads(done.stdout)["total"] == 20, done.stderr


def test_a_truncated_promptfoo_file_is_refused_naming_it(tmp_path: Path) -> None:
    data = (RUNS / "promptfoo_b.json").read_bytes()
    (tmp_path / "cut.json").write_bytes(data[: len(data) // 2])
    line = refused(assay("compare", RUNS / "promptfoo_a.json", tmp_path / "cut.json"), "cut.json", "truncated")
    assert "line" in line  # where the JSON broke off


def test_a_truncated_eval_log_is_refused_naming_it(tmp_path: Path) -> None:
    data = (RUNS / "inspect_b.eval").read_bytes()
    (tmp_path / "cut.eval").write_bytes(data[: len(data) - 3000])
    refused(assay("report", tmp_path / "cut.eval"), "cut.eval", "zip")


def test_a_damaged_sample_in_an_eval_log_is_named(tmp_path: Path) -> None:
    with zipfile.ZipFile(RUNS / "inspect_a.eval") as src, \
            zipfile.ZipFile(tmp_path / "bad.eval", "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            if info.filename == "samples/japan_epoch_2.json":
                dst.writestr(info.filename, b'{"id": "japan", "epoch": 2, "scores": {"match": ')
            else:
                dst.writestr(info.filename, _member(src, info))
    refused(assay("report", tmp_path / "bad.eval"), "bad.eval", "samples/japan_epoch_2.json", "damaged JSON")


def _member(src: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    """A member's bytes, read through the product's reader (the stdlib cannot inflate zstd here)."""
    from assay.runner.foreign._eval_zip import EvalZip

    with EvalZip(Path(src.filename or "")) as log:
        return orjson.dumps(log.document(info.filename))


def test_an_old_or_damaged_promptfoo_file_says_what_and_where(tmp_path: Path) -> None:
    doc = json.loads((RUNS / "promptfoo_a.json").read_text())
    old = doc | {"results": doc["results"] | {"version": 2, "table": {}}}
    (tmp_path / "old.json").write_text(json.dumps(old))
    refused(assay("report", tmp_path / "old.json"), "old.json", "version 2", "promptfoo")
    doc["results"]["results"][4]["gradingResult"]["componentResults"][1].pop("pass")
    (tmp_path / "bad.json").write_text(json.dumps(doc))
    refused(assay("report", tmp_path / "bad.json"), "bad.json", "results.results[4].gradingResult.componentResults[1]",
            "pass")


def test_promptfoos_json_lines_compare_as_its_json_does() -> None:
    lines = compared(RUNS / "promptfoo_a.jsonl", RUNS / "promptfoo_b.jsonl")
    whole = compared(RUNS / "promptfoo_a.json", RUNS / "promptfoo_b.json")
    assert lines == whole
    mixed = compared(RUNS / "promptfoo_a.json", RUNS / "promptfoo_b.jsonl")
    assert mixed["overall"]["to_fail"] == whole["overall"]["to_fail"]


def test_a_truncated_promptfoo_jsonl_names_the_line(tmp_path: Path) -> None:
    data = (RUNS / "promptfoo_b.jsonl").read_bytes()
    lines = data.split(b"\n")
    (tmp_path / "cut.jsonl").write_bytes(b"\n".join(lines[:5]) + b"\n" + lines[5][:100])
    refused(assay("report", tmp_path / "cut.jsonl"), "cut.jsonl:6", "truncated")
