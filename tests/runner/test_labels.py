"""Human labels (labels files and reviews), pairing them with a judge's results, and the
calibration records that make a changed judge ``stale``."""

import json

import pytest

from assay.core.aggregate import judge_sample
from assay.core.errors import SpecError
from assay.core.sample import Sample
from assay.core.spec import compile_spec
from assay.runner.labels import (
    Label,
    calibrate_results,
    judge_calibrations,
    load_records,
    pair_up,
    read_labels,
    records_path,
    review_labels,
)
from assay.runner.reviews import load_reviews, load_verdicts, submit_review
from assay.runner.suites.loader import load_suite

JUDGE = compile_spec({"type": "regex", "name": "judge", "config": {"pattern": "good"}}).build()
CAL = compile_spec({"type": "human_calibration", "name": "cal", "config": {"calibrate_grader": "judge"}}).build()
HUMAN = compile_spec({"type": "human", "name": "review"}).build()
OUTPUTS = [("a", "good"), ("b", "bad"), ("c", "good"), ("d", "bad")]


@pytest.fixture
def results_file(tmp_path):
    path = tmp_path / "results.jsonl"
    lines = [json.dumps(judge_sample(sid, [g.grade(Sample(id=sid, output=out)) for g in (JUDGE, CAL, HUMAN)]).to_dict())
             for sid, out in OUTPUTS]
    path.write_text("\n".join(lines) + "\n")
    return path


def write_labels(path, rows):
    path.write_text("".join((r if isinstance(r, str) else json.dumps(r)) + "\n" for r in rows))
    return path


def test_read_labels(tmp_path):
    path = write_labels(tmp_path / "l.jsonl", [{"sample_id": "a", "passed": True, "score": 0.8}, "",
                                               {"sample_id": "b", "passed": False, "comment": "no"}])
    assert read_labels(path) == [Label("a", True, 0.8), Label("b", False, None)]


@pytest.mark.parametrize("row, message", [
    ("{oops", "l.jsonl:1: not JSON"),
    ([1], "must be an object"),
    ({"sample_id": "a"}, "`passed` must be true or false"),
    ({"sample_id": "a", "passed": "yes"}, "`passed` must be true or false"),
    ({"sample_id": 3, "passed": True}, "`sample_id` must be non-empty text"),
    ({"sample_id": "a", "passed": True, "score": 2}, "between 0 and 1"),
    ({"sample_id": "a", "passed": True, "score": True}, "between 0 and 1"),
    ({"sample_id": "a", "passed": True, "verdict": 1}, "unknown field 'verdict'"),
])
def test_bad_labels_name_file_and_line(tmp_path, row, message):
    with pytest.raises(SpecError, match=message):
        read_labels(write_labels(tmp_path / "l.jsonl", [row]))


def test_a_sample_labelled_twice_is_refused(tmp_path):
    path = write_labels(tmp_path / "l.jsonl", [{"sample_id": "a", "passed": True}, {"sample_id": "a", "passed": False}])
    with pytest.raises(SpecError, match=r"l.jsonl:2: sample 'a' is labelled twice \(first on line 1\)"):
        read_labels(path)


def test_review_labels_prefer_calibration_reviews_aimed_at_the_judge(results_file):
    submit_review(results_file, "a", "review", False)
    submit_review(results_file, "a", "cal", True)
    submit_review(results_file, "b", "cal", False)
    submit_review(results_file, "b", "cal", True)  # the later review wins
    verdicts, reviews = load_verdicts(results_file), load_reviews(results_file)
    assert sorted(review_labels(verdicts, reviews, "judge"), key=lambda x: x.sample_id) == [
        Label("a", True, 1.0), Label("b", True, 1.0)]
    # no human_calibration grader aims at "other": the plain human reviews are its labels
    assert review_labels(verdicts, reviews, "other") == [Label("a", False, 0.0)]


def test_pair_up_counts_what_it_leaves_out(results_file):
    verdicts = load_verdicts(results_file)
    labels = [Label("a", True), Label("b", True), Label("zz", True)]
    pairs, left = pair_up(verdicts, labels, "judge")
    assert [(p.sample_id, p.judge_passed, p.human_passed) for p in pairs] == [("a", True, True), ("b", False, True)]
    assert left == {"missing": 1, "unscored": 0}
    pairs, left = pair_up(verdicts, labels, "review")  # a pending grader is not a verdict
    assert pairs == [] and left == {"missing": 1, "unscored": 2}
    with pytest.raises(SpecError, match="no grader named 'nope' .*graders: cal, judge, review"):
        pair_up(verdicts, labels, "nope")


def test_calibrate_from_reviews_and_record(results_file):
    for sid, label in [("a", True), ("b", True), ("c", True), ("d", False)]:
        submit_review(results_file, sid, "cal", label)
    report = calibrate_results(results_file, "judge", min_labels=4)
    assert (report["n"], report["agreement"], report["kappa"]) == (4, 0.75, 0.5)
    assert report["status"] == "uncalibrated" and report["labels_source"].endswith("results.reviews.jsonl")
    record = load_records(results_file)["judge"]
    assert record["status"] == "uncalibrated" and record["kappa"] == 0.5 and "roc" not in record
    assert records_path(results_file).name == "results.calibration.json"
    rows = [r for r in judge_calibrations(results_file, {}) if r["judge"] == "judge"]
    assert rows and rows[0]["status"] == "uncalibrated" and "earlier run" not in rows[0]["reason"]


def _suite(folder, threshold, extra=""):
    (folder / "data.jsonl").write_text("".join(json.dumps({"id": sid, "output": out, "expected": "good answer"}) + "\n"
                                               for sid, out in OUTPUTS + [("e", "good"), ("f", "good answer")]))
    (folder / "eval.yaml").write_text(f"name: t\ndataset: data.jsonl\ngraders:\n"
                                      f"  - {{type: similarity, name: judge, config: {{threshold: {threshold}}}}}\n"
                                      + extra)
    return load_suite(folder / "eval.yaml")


def _run(suite, out):
    from assay.runner.results import suite_fingerprint, verdict_line

    fp = suite_fingerprint(suite)
    graders = [s.build() for s in suite.graders]
    out.write_bytes(b"".join(verdict_line(judge_sample(s.id, [g.grade(s) for g in graders]), fp)
                             for s in suite.samples))


def test_a_changed_judge_makes_the_calibration_stale(tmp_path):
    labels = write_labels(tmp_path / "labels.jsonl", [{"sample_id": s, "passed": s in "acef"} for s in "abcdef"])
    results = tmp_path / "results.jsonl"
    suite = _suite(tmp_path, 0.3)
    _run(suite, results)
    first = calibrate_results(results, "judge", labels=labels, suite=suite, min_labels=6)
    assert first["status"] == "calibrated" and first["fingerprint"] == first["current"]

    # another grader added: the suite changed, the judge did not
    same_judge = _suite(tmp_path, 0.3, "  - {type: contains, name: other}\n")
    again = calibrate_results(results, "judge", labels=labels, suite=same_judge, min_labels=6)
    assert again["status"] == "calibrated" and again["fingerprint"] == first["fingerprint"]

    # the judge's threshold changed after the labels were compared with its results
    changed = _suite(tmp_path, 0.9)
    stale = calibrate_results(results, "judge", labels=labels, suite=changed, min_labels=6)
    assert stale["status"] == "stale" and stale["fingerprint"] == first["fingerprint"] != stale["current"]
    assert [r["status"] for r in judge_calibrations(results, {})] == ["stale"]

    _run(changed, results)  # re-run with the changed judge: fresh again
    fresh = calibrate_results(results, "judge", labels=labels, suite=changed, min_labels=6)
    assert fresh["status"] != "stale" and fresh["fingerprint"] == fresh["current"]


def test_without_a_record_or_matching_run_staleness_is_unknown_not_guessed(tmp_path):
    labels = write_labels(tmp_path / "labels.jsonl", [{"sample_id": s, "passed": s in "acef"} for s in "abcdef"])
    results = tmp_path / "results.jsonl"
    _run(_suite(tmp_path, 0.3), results)
    report = calibrate_results(results, "judge", labels=labels, suite=_suite(tmp_path, 0.9), min_labels=6,
                               record=False)
    assert report["status"] != "stale" and report["fingerprint"] is None
    assert "re-run the suite" in report["notes"][0]
    assert not records_path(results).exists()
