import pytest

from assay.core.aggregate import judge_sample, summarize, weighted_score
from assay.core.result import GraderResult


def res(name, status, score=None, weight=1.0, error=None):
    passed = status == "passed"
    if score is None and status in ("passed", "failed"):
        score = 1.0 if passed else 0.0
    return GraderResult(name=name, type="t", status=status, passed=passed, score=score,
                        weight=weight, error=error)


def test_weighted_mean_excludes_errors_and_pending():
    rs = [res("a", "passed", 1.0, 3), res("b", "failed", 0.0, 1), res("c", "error", error="timeout"),
          res("d", "pending")]
    assert weighted_score(rs) == pytest.approx(0.75)
    assert weighted_score(rs, errors_as_zero=True) == pytest.approx(3 / 5)


def test_no_scored_results_has_no_score():
    assert weighted_score([res("c", "error", error="timeout")]) is None


def test_all_must_pass_without_threshold():
    assert judge_sample("s", [res("a", "passed"), res("b", "passed")]).passed
    v = judge_sample("s", [res("a", "passed"), res("b", "failed", 0.9)])
    assert v.status == "failed" and not v.passed


def test_weights_change_the_verdict_under_a_threshold():
    rs = [res("cheap", "failed", 0.0, weight=1), res("judge", "passed", 1.0, weight=4)]
    assert judge_sample("s", rs, threshold=0.7).passed            # 0.8 >= 0.7
    rs = [res("cheap", "failed", 0.0, weight=4), res("judge", "passed", 1.0, weight=1)]
    assert not judge_sample("s", rs, threshold=0.7).passed        # 0.2 < 0.7


def test_error_is_not_a_failure_but_is_not_a_pass():
    v = judge_sample("s", [res("a", "passed"), res("b", "error", error="timeout")])
    assert v.status == "error" and not v.passed and v.score == 1.0


def test_failure_wins_over_error_and_error_over_pending():
    assert judge_sample("s", [res("a", "failed"), res("b", "error", error="timeout")]).status == "failed"
    assert judge_sample("s", [res("a", "pending"), res("b", "error", error="memory")]).status == "error"
    assert judge_sample("s", [res("a", "passed"), res("b", "pending")]).status == "pending"


def test_summary_counts_apart():
    verdicts = [judge_sample("1", [res("a", "passed"), res("b", "error", error="timeout")]),
                judge_sample("2", [res("a", "failed", 0.5), res("b", "passed")]),
                judge_sample("3", [res("a", "passed"), res("b", "pending")])]
    s = summarize(verdicts)
    assert (s.total, s.passed, s.failed, s.errors, s.pending) == (3, 0, 1, 1, 1)
    a, b = s.graders
    assert (a.passed, a.failed, a.pass_rate, a.mean_score) == (2, 1, 2 / 3, pytest.approx(2.5 / 3))
    assert (b.passed, b.errors, b.pending, b.error_codes) == (1, 1, 1, {"timeout": 1})
    assert b.pass_rate == 1.0 and b.mean_score == 1.0


def test_skips_counted_even_before_a_grader_first_runs():
    first = judge_sample("1", [res("cheap", "failed")])
    first.skipped = ["costly", "never"]
    second = judge_sample("2", [res("cheap", "passed"), res("costly", "passed")])
    s = summarize([first, second])
    by = {g.name: g for g in s.graders}
    assert (by["costly"].skipped, by["costly"].passed, by["costly"].type) == (1, 1, "t")
    assert (by["never"].skipped, by["never"].total, by["never"].weight) == (1, 0, None)
