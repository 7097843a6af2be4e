"""Review store: append-only sidecar, applied to pending human results; calibration stats."""

from __future__ import annotations

import json

import pytest

from assay.core.aggregate import judge_sample
from assay.core.errors import SpecError
from assay.core.sample import Sample
from assay.core.spec import compile_spec
from assay.runner.reviews import (
    apply_reviews,
    calibration_summary,
    load_reviews,
    load_verdicts,
    reviews_path,
    submit_review,
)

JUDGE = compile_spec({"type": "regex", "name": "judge", "config": {"pattern": "good"}}).build()
CAL = compile_spec({"type": "human_calibration", "name": "cal", "config": {"calibrate_grader": "judge"}}).build()
HUMAN = compile_spec({"type": "human", "name": "review"}).build()


@pytest.fixture
def results_file(tmp_path):
    path = tmp_path / "results.jsonl"
    lines = []
    for sid, out in [("a", "good"), ("b", "bad"), ("c", "good"), ("d", "bad")]:
        s = Sample(id=sid, output=out)
        lines.append(json.dumps(judge_sample(sid, [JUDGE.grade(s), CAL.grade(s), HUMAN.grade(s)]).to_dict()))
    path.write_text("\n".join(lines) + "\n")
    return path


def test_submit_appends_and_never_rewrites_results(results_file):
    before = results_file.read_text()
    submit_review(results_file, "a", "review", True, comment="fine", reviewer="ann")
    submit_review(results_file, "a", "review", False, score=0.3)
    assert results_file.read_text() == before
    assert reviews_path(results_file).name == "results.reviews.jsonl"
    reviews = load_reviews(results_file)
    assert [(r.passed, r.score, r.reviewer) for r in reviews] == [(True, 1.0, "ann"), (False, 0.3, None)]


@pytest.mark.parametrize("args, message", [
    (("zz", "review", True), "no sample 'zz'"),
    (("a", "judge", True), "no human grader 'judge'"),
    (("a", "review", True, 1.5), "between 0 and 1"),
])
def test_submit_rejects_unknown_targets(results_file, args, message):
    with pytest.raises(SpecError, match=message):
        submit_review(results_file, *args)


def test_apply_turns_pending_into_verdicts_and_later_review_wins(results_file):
    verdicts = load_verdicts(results_file)
    assert [v.status.value for v in verdicts] == ["pending", "failed", "pending", "failed"]
    submit_review(results_file, "a", "review", False)
    submit_review(results_file, "a", "review", True, score=0.9, comment="ok after all")
    submit_review(results_file, "a", "cal", True)
    a = apply_reviews(verdicts, load_reviews(results_file))[0]
    review = next(r for r in a.results if r.name == "review")
    assert (review.status.value, review.score, review.reason) == ("passed", 0.9, "ok after all")
    assert a.status.value == "passed" and a.score == pytest.approx((1 + 1 + 0.9) / 3)
    assert apply_reviews(verdicts, [])[0] is verdicts[0]


def test_calibration_summary(results_file):
    # judge: a pass, b fail, c pass, d fail. Humans: a pass, b pass, c pass, d fail.
    for sid, label in [("a", True), ("b", True), ("c", True), ("d", False)]:
        submit_review(results_file, sid, "cal", label)
    verdicts = apply_reviews(load_verdicts(results_file), load_reviews(results_file))
    b_cal = next(r for r in verdicts[1].results if r.name == "cal")
    assert b_cal.details["calibration"]["agree"] is False
    stats = calibration_summary(verdicts)["cal"]
    assert stats["grader"] == "judge" and stats["compared"] == 4
    assert stats["agreement_rate"] == 0.75 and stats["mean_abs_diff"] == 0.25
    assert stats["confusion"] == {"tp": 2, "fp": 0, "fn": 1, "tn": 1}
    assert stats["cohen_kappa"] == pytest.approx(0.5)


def test_load_verdicts_reports_line(tmp_path):
    bad = tmp_path / "r.jsonl"
    bad.write_text('{"id": "a", "status": "passed", "results": []}\nnot json\n{"id": "b"}\n')
    with pytest.raises(SpecError, match="r.jsonl:2"):
        load_verdicts(bad)


@pytest.mark.parametrize("line", [
    "[" * 5000 + "]" * 5000,
    '{"sample_id": "a", "grader": "review", "passed": "yes", "score": 1, "created_at": ""}',
    '{"sample_id": "a", "grader": "review", "passed": true, "score": 7, "created_at": ""}',
    '{"sample_id": ["a"], "grader": "review", "passed": true, "score": 1, "created_at": ""}',
    '{"unexpected": 1}',
    '"just text"',
])
def test_damaged_reviews_name_their_line(results_file, line):
    submit_review(results_file, "a", "review", True)
    with reviews_path(results_file).open("a") as fh:
        fh.write(line + "\n")
    with pytest.raises(SpecError, match=r"results\.reviews\.jsonl:2: unreadable review"):
        load_reviews(results_file)


def test_review_text_that_json_cannot_hold_is_normalised(results_file):
    submit_review(results_file, "a", "review", True, comment="bad \ud800 text", reviewer="r\udfff")
    [review] = load_reviews(results_file)
    assert review.comment == "bad \ufffd text" and review.reviewer == "r\ufffd"


def test_calibration_summary_uses_the_shared_statistics(results_file):
    # judge: a pass, b fail, c pass, d fail. Humans: a pass, b pass, c pass, d fail.
    # tp 2 (a, c), fn 1 (b), tn 1 (d): kappa 2(2·1 - 0·1) / ((2)(1) + (3)(2)) = 0.5
    for sid, label in [("a", True), ("b", True), ("c", True), ("d", False)]:
        submit_review(results_file, sid, "cal", label)
    verdicts = apply_reviews(load_verdicts(results_file), load_reviews(results_file))
    stats = calibration_summary(verdicts)["cal"]
    assert stats["confusion"] == {"tp": 2, "fp": 0, "fn": 1, "tn": 1}
    assert (stats["cohen_kappa"], stats["tpr"], stats["tnr"]) == (0.5, pytest.approx(2 / 3), 1.0)
    assert stats["status"] == "uncalibrated" and "4 labels compared, fewer than 20" in stats["reason"]
    assert calibration_summary(verdicts, min_labels=4, min_kappa=0.5)["cal"]["status"] == "calibrated"


def test_calibration_summary_before_any_label(results_file):
    stats = calibration_summary(load_verdicts(results_file))["cal"]
    assert stats["grader"] == "judge" and stats["compared"] == 0 and stats["cohen_kappa"] is None
    assert stats["status"] == "uncalibrated"
