"""Calibration statistics, each checked against numbers worked out by hand."""

import pytest

from assay.core.context import SpecContext
from assay.core.spec import compile_spec
from assay.core.stats import wilson
from assay.runner.calibration import (
    Pair,
    RocPoint,
    best_threshold,
    calibration_status,
    cohen_kappa,
    compare,
    confusion,
    judge_fingerprint,
    roc_points,
)


def pairs_from(*rows):
    """(judge_score, judge_passed, human_passed[, human_score]) rows as pairs."""
    return [Pair(str(i), jp, js, hp, *rest) for i, (js, jp, hp, *rest) in enumerate(rows)]


def counts(tp=0, fp=0, fn=0, tn=0):
    return ([(1.0, True, True)] * tp + [(1.0, True, False)] * fp + [(0.0, False, True)] * fn
            + [(0.0, False, False)] * tn)


@pytest.mark.parametrize("conf, kappa", [
    # po = 35/50 = 0.7; judge yes 0.5, human yes 0.6; pe = 0.5*0.6 + 0.5*0.4 = 0.5; (0.7-0.5)/0.5
    ({"tp": 20, "fp": 5, "fn": 10, "tn": 15}, 0.4),
    ({"tp": 3, "fp": 0, "fn": 0, "tn": 7}, 1.0),
    ({"tp": 0, "fp": 5, "fn": 5, "tn": 0}, -1.0),
    # po = 0.5; judge yes 0.5, human yes 0.5; pe = 0.5: chance agreement only
    ({"tp": 1, "fp": 1, "fn": 1, "tn": 1}, 0.0),
    # po = 0.9; judge yes 0.9, human yes 1.0; pe = 0.9: no better than chance despite 90%
    ({"tp": 9, "fp": 0, "fn": 1, "tn": 0}, 0.0),
    ({"tp": 4, "fp": 0, "fn": 0, "tn": 0}, None),  # both always pass: undefined, not 1
    ({"tp": 0, "fp": 0, "fn": 0, "tn": 0}, None),
])
def test_cohen_kappa(conf, kappa):
    got = cohen_kappa(conf)
    assert got == (None if kappa is None else pytest.approx(kappa))


def test_compare_counts_and_rates():
    c = compare(pairs_from(*counts(tp=20, fp=5, fn=10, tn=15)))
    assert c.n == 50 and c.confusion == {"tp": 20, "fp": 5, "fn": 10, "tn": 15}
    assert c.agreement == pytest.approx(0.7) and c.kappa == pytest.approx(0.4)
    assert c.tpr == pytest.approx(20 / 30)  # of the human passes, the share the judge passed
    assert c.tnr == pytest.approx(15 / 20)  # of the human fails, the share the judge failed
    doc = c.to_dict()  # each rate with its Wilson 95% interval (core.stats, checked against statsmodels)
    assert (doc["agreement_ci"], doc["tpr_ci"], doc["tnr_ci"]) == (
        list(wilson(35, 50)), list(wilson(20, 30)), list(wilson(15, 20)))


def test_rates_are_none_without_their_class():
    c = compare(pairs_from(*counts(tp=3, fn=1)))  # no human fails
    assert c.tnr is None and c.tpr == 0.75 and c.kappa == 0.0
    assert c.to_dict()["tnr_ci"] is None
    empty = compare([])
    assert (empty.n, empty.agreement, empty.kappa, empty.best) == (0, None, None, None)


def test_mean_abs_diff_uses_only_labels_with_a_score():
    c = compare(pairs_from((0.9, True, True, 0.5), (0.2, False, False), (0.0, False, True, 1.0)))
    assert c.mean_abs_diff == pytest.approx((0.4 + 1.0) / 2)


# judge scores 0.9 0.8 0.7 0.6 0.2 with human labels + + - + -
ROC_PAIRS = pairs_from((0.9, True, True), (0.8, True, True), (0.7, False, False), (0.6, False, True),
                       (0.2, False, False))


def test_roc_points_by_hand():
    got = [(p.threshold, p.tpr, p.fpr, p.agreement) for p in roc_points(ROC_PAIRS)]
    expected = [
        (0.9, 1 / 3, 0.0, 3 / 5),  # passes {0.9}: tp 1, fn 2, fp 0, tn 2
        (0.8, 2 / 3, 0.0, 4 / 5),  # passes {0.9, 0.8}
        (0.7, 2 / 3, 0.5, 3 / 5),  # + 0.7, a human fail
        (0.6, 1.0, 0.5, 4 / 5),  # + 0.6, a human pass
        (0.2, 1.0, 1.0, 3 / 5),  # everything passes
    ]
    assert got == [pytest.approx(e) for e in expected]


def test_best_threshold_maximises_agreement_and_breaks_ties_by_youden():
    best = compare(ROC_PAIRS).best
    # 0.8 and 0.6 both agree on 4 of 5; 0.8 has TPR - FPR 2/3 against 0.6's 1/2
    assert best.threshold == 0.8 and best.agreement == pytest.approx(0.8)
    tied = [RocPoint(0.7, 0.5, 0.0, 0.75), RocPoint(0.3, 0.5, 0.0, 0.75)]
    assert best_threshold(tied).threshold == 0.3  # then the lower threshold


def test_roc_ignores_the_judges_own_pass_mark():
    # judge passed nothing (its threshold was too high), yet its scores separate perfectly at 0.5
    c = compare(pairs_from((0.6, False, True), (0.5, False, True), (0.1, False, False)))
    assert c.agreement == pytest.approx(1 / 3)
    assert (c.best.threshold, c.best.agreement) == (0.5, 1.0)


def test_confusion_treats_the_human_as_truth():
    assert confusion(pairs_from((1.0, True, False), (0.0, False, True))) == {"tp": 0, "fp": 1, "fn": 1, "tn": 0}


@pytest.mark.parametrize("conf, kwargs, status, why", [
    ({"tp": 12, "tn": 8}, {}, "calibrated", "20 labels, kappa 1.000"),
    ({"tp": 12, "tn": 7}, {}, "uncalibrated", "19 labels compared, fewer than 20"),
    ({"tp": 6, "tn": 4}, {"min_labels": 10}, "calibrated", "10 labels"),
    ({"tp": 20, "fp": 5, "fn": 10, "tn": 15}, {}, "uncalibrated", "kappa 0.400 is below 0.6"),
    ({"tp": 20, "fp": 5, "fn": 10, "tn": 15}, {"min_kappa": 0.4}, "calibrated", "kappa 0.400"),
    ({"tp": 30}, {}, "uncalibrated", "undefined"),
    ({"tp": 12, "tn": 8}, {"compared_with": "aaa", "current": "bbb"}, "stale", "aaa → bbb"),
    ({"tp": 1}, {"compared_with": "aaa", "current": "bbb"}, "stale", "changed"),
    ({"tp": 12, "tn": 8}, {"compared_with": "aaa", "current": "aaa"}, "calibrated", ""),
    ({"tp": 12, "tn": 8}, {"compared_with": None, "current": "bbb"}, "calibrated", ""),  # unknown: not stale
])
def test_calibration_status(conf, kwargs, status, why):
    c = compare(pairs_from(*counts(**conf)))
    got, reason = calibration_status(c, **kwargs)
    assert got == status and why in reason


LLM = {"type": "llm", "name": "j", "config": {"rubric": "Be right.", "model": "m1", "temperature": 0.0}}


@pytest.mark.parametrize("change", [
    {"rubric": "Be kind."}, {"model": "m2"}, {"temperature": 0.5}, {"threshold": 0.5}, {"scale": "1-10"},
])
def test_fingerprint_changes_with_rubric_model_and_parameters(change):
    before = judge_fingerprint(compile_spec(LLM))
    after = judge_fingerprint(compile_spec(LLM | {"config": LLM["config"] | change}))
    assert before != after


def test_fingerprint_ignores_name_and_weight():
    assert judge_fingerprint(compile_spec(LLM)) == judge_fingerprint(compile_spec(LLM | {"name": "x", "weight": 3}))


def test_fingerprint_follows_a_rubric_files_content(tmp_path):
    spec = {"type": "llm", "config": {"rubric_file": "rubric.md"}}
    context = SpecContext(base_dir=tmp_path)
    (tmp_path / "rubric.md").write_text("Be right.")
    before = judge_fingerprint(compile_spec(spec, context=context))
    (tmp_path / "rubric.md").write_text("Be right and brief.")
    assert judge_fingerprint(compile_spec(spec, context=context)) != before  # same config, new rubric


def test_fingerprint_of_a_composite_follows_its_children(tmp_path):
    (tmp_path / "rubric.md").write_text("one")
    spec = {"type": "composite", "config": {"graders": [{"type": "llm", "config": {"rubric_file": "rubric.md"}}]}}
    context = SpecContext(base_dir=tmp_path)
    before = judge_fingerprint(compile_spec(spec, context=context))
    (tmp_path / "rubric.md").write_text("two")
    assert judge_fingerprint(compile_spec(spec, context=context)) != before
