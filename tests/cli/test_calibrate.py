"""`assay calibrate` as a user runs it, on the shipped example (examples/calibration), and the
calibration status `assay report` shows beside each judge."""

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "calibration"


def assay(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "assay.cli.main", *args], capture_output=True, text=True,
                          cwd=cwd, timeout=120)


@pytest.fixture
def example(tmp_path):
    """A copy of the example, so that calibration records are written there, not in the repo."""
    folder = tmp_path / "calibration"
    shutil.copytree(EXAMPLE, folder, ignore=shutil.ignore_patterns("*.calibration.json*"))
    return folder


def test_the_shipped_example_prints_its_table(example):
    r = assay("calibrate", str(example / "results.jsonl"), "--judge", "judge", "--labels",
              str(example / "labels.jsonl"))
    assert r.returncode == 1, r.stderr  # the stand-in judge does not agree with people: not calibrated
    out = r.stdout
    for line in ("Cohen's kappa", "agreement", "true-positive rate", "true-negative rate", "best threshold",
                 "ROC", "◀ best", "status: uncalibrated"):
        assert line in out, out
    assert "against 28 human labels" in out


def test_the_shipped_results_match_the_shipped_suite_and_labels():
    # results.jsonl must be what the suite writes now, or the example would teach a stale judge
    r = assay("calibrate", str(EXAMPLE / "results.jsonl"), "--judge", "judge", "--labels",
              str(EXAMPLE / "labels.jsonl"), "--suite", str(EXAMPLE), "--json", "--no-record")
    report = json.loads(r.stdout)
    assert report["fingerprint"] == report["current"] is not None and report["notes"] == []
    assert report["n"] == report["labels"] == 28 and report["missing"] == report["unscored"] == 0
    assert not (EXAMPLE / "results.calibration.json").exists()


def test_json_for_ci(example):
    r = assay("calibrate", str(example / "results.jsonl"), "--judge", "judge", "--labels",
              str(example / "labels.jsonl"), "--json", "--min-labels", "5", "--min-kappa", "-1")
    assert r.returncode == 0, r.stderr  # every bar lowered: calibrated, exit 0
    report = json.loads(r.stdout)
    assert report["status"] == "calibrated" and report["min_labels"] == 5
    conf = report["confusion"]
    assert sum(conf.values()) == report["n"] == 28
    assert report["agreement"] == pytest.approx((conf["tp"] + conf["tn"]) / 28)
    assert report["best"]["agreement"] >= report["agreement"]
    assert {"threshold", "tpr", "fpr", "agreement"} <= set(report["roc"][0])


def test_stale_after_the_judge_changes_and_report_shows_it(example):
    results, labels = str(example / "results.jsonl"), str(example / "labels.jsonl")
    first = assay("calibrate", results, "--judge", "judge", "--labels", labels, "--suite", str(example))
    assert "status: uncalibrated" in first.stdout, first.stderr
    suite = example / "eval.yaml"
    suite.write_text(suite.read_text().replace("threshold: 0.8", "threshold: 0.9"))
    again = assay("calibrate", results, "--judge", "judge", "--labels", labels, "--suite", str(example), "--json")
    assert again.returncode == 1 and json.loads(again.stdout)["status"] == "stale"
    report = assay("report", results)
    assert "judges against human labels" in report.stdout and "stale" in report.stdout
    doc = json.loads(assay("report", results, "--json").stdout)
    assert [(j["judge"], j["status"]) for j in doc["judges"]] == [("judge", "stale")]


def test_labels_from_reviews_and_report(tmp_path):
    (tmp_path / "data.jsonl").write_text("".join(json.dumps({"id": sid, "output": out}) + "\n"
                                                 for sid, out in [("a", "good"), ("b", "bad"), ("c", "good")]))
    (tmp_path / "eval.yaml").write_text(
        "name: t\ndataset: data.jsonl\ngraders:\n"
        "  - {type: regex, name: judge, config: {pattern: good}}\n"
        "  - {type: human_calibration, name: cal, config: {calibrate_grader: judge}}\n")
    results = str(tmp_path / "results.jsonl")
    assert assay("run", str(tmp_path), "--out", results).returncode == 1  # pending reviews
    for sid, verdict in [("a", "--pass"), ("b", "--fail"), ("c", "--fail")]:
        assert assay("review", results, "-s", sid, "-g", "cal", verdict).returncode in (0, 1)
    report = json.loads(assay("calibrate", results, "--judge", "judge", "--json", "--min-labels", "3").stdout)
    assert report["labels_source"].endswith("results.reviews.jsonl")
    assert report["confusion"] == {"tp": 1, "fp": 1, "fn": 0, "tn": 1} and report["status"] == "uncalibrated"
    shown = assay("report", results).stdout
    assert "human_calibration cal" in shown and "uncalibrated" in shown


@pytest.mark.parametrize("args, message", [
    (["--judge", "nope"], "no grader named 'nope'"),
    (["--judge", "judge", "--labels", "missing.jsonl"], "missing.jsonl"),
])
def test_mistakes_are_one_line(example, args, message):
    r = assay("calibrate", str(example / "results.jsonl"), *args, cwd=example)
    assert r.returncode == 2 and message in r.stderr and "Traceback" not in r.stderr
