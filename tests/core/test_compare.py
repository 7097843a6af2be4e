"""core.compare on generated runs: pairing, the reference p-values and intervals, what is left
out, repeats paired by cluster, and the documented JSON shape."""

from __future__ import annotations

import numpy as np
import pytest
from statsmodels.stats.contingency_tables import mcnemar

from assay.core import stats
from assay.core.aggregate import SampleVerdict, judge_sample
from assay.core.compare import compare_runs
from assay.core.result import ErrorCode, Status, make_result


def _result(name: str, status: Status, score: float | None = None, reason: str | None = None):
    if score is None and status in (Status.PASSED, Status.FAILED):
        score = 1.0 if status is Status.PASSED else 0.0
    return make_result(name, "exact_match", "code", status, status is Status.PASSED, score, reason=reason,
                       details={}, error=ErrorCode.TIMEOUT if status is Status.ERROR else None, weight=1.0)


def _verdict(sid: str, outcomes: dict[str, Status], cluster: str | None = None, reason: str = "no") -> SampleVerdict:
    v = judge_sample(sid, [_result(n, s, reason=None if s is Status.PASSED else f"{n} {reason}")
                           for n, s in outcomes.items()])
    v.cluster = cluster
    return v


def _runs(seed: int, n: int = 300):
    """Two runs of ``n`` samples graded by `a` (correlated across runs) and `b`."""
    rng = np.random.default_rng(seed)
    base, new = [], []
    for i in range(n):
        x = rng.random() < 0.7
        y = rng.random() < (0.85 if x else 0.3)
        bx, by = rng.random() < 0.5, rng.random() < 0.5
        base.append(_verdict(f"s{i}", {"a": Status(("failed", "passed")[x]), "b": Status(("failed", "passed")[bx])},
                             reason="base"))
        new.append(_verdict(f"s{i}", {"a": Status(("failed", "passed")[y]), "b": Status(("failed", "passed")[by])},
                            reason="new"))
    return base, new


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_matches_mcnemar_and_newcombe_on_generated_runs(seed: int) -> None:
    base, new = _runs(seed)
    got = compare_runs(base, new)
    for g in got.graders:
        xs = [next(r for r in v.results if r.name == g.grader).passed for v in base]
        ys = [next(r for r in v.results if r.name == g.grader).passed for v in new]
        table = [[sum(x and y for x, y in zip(xs, ys)), sum(x and not y for x, y in zip(xs, ys))],
                 [sum(y and not x for x, y in zip(xs, ys)), sum(not x and not y for x, y in zip(xs, ys))]]
        assert g.p_value == pytest.approx(mcnemar(table, exact=True).pvalue, rel=1e-9)
        assert g.delta == pytest.approx((sum(ys) - sum(xs)) / len(xs))
        assert g.delta_ci == stats.paired_rate_interval(table[0][0], table[0][1], table[1][0], table[1][1])
        assert [f.id for f in g.to_fail] == [v.id for v, x, y in zip(base, xs, ys) if x and not y]
        assert [f.id for f in g.to_pass] == [v.id for v, x, y in zip(base, xs, ys) if y and not x]
        assert all(f.base_reason is None and f.new_reason == f"{g.grader} new" for f in g.to_fail)
    # A sample passes when both graders pass: the verdicts are compared the same way.
    assert got.overall.delta == pytest.approx((sum(v.passed for v in new) - sum(v.passed for v in base)) / len(base))


def test_unpaired_samples_are_listed_apart_and_never_paired() -> None:
    base = [_verdict("s1", {"a": Status.PASSED}), _verdict("gone", {"a": Status.FAILED})]
    new = [_verdict("s1", {"a": Status.FAILED}), _verdict("added", {"a": Status.PASSED})]
    got = compare_runs(base, new)
    assert (got.base_only, got.new_only) == (["gone"], ["added"])
    assert got.graders[0].pairs == 1 and got.graders[0].base_pass_rate == 1.0


def test_errors_and_pending_are_left_out_and_counted() -> None:
    base = [_verdict("s1", {"a": Status.ERROR}), _verdict("s2", {"a": Status.PASSED}),
            _verdict("s3", {"a": Status.PASSED})]
    new = [_verdict("s1", {"a": Status.PASSED}), _verdict("s2", {"a": Status.PENDING}),
           _verdict("s3", {"a": Status.FAILED})]
    a = compare_runs(base, new).graders[0]
    assert (a.pairs, a.left_out, a.base_pass_rate, a.new_pass_rate) == (1, 2, 1.0, 0.0)
    assert [f.id for f in a.to_fail] == ["s3"]


def test_repeats_pair_by_cluster_with_a_bounded_interval_and_a_sign_test() -> None:
    rng = np.random.default_rng(7)
    base, new = [], []
    for t in range(40):
        for r in range(3):
            base.append(_verdict(f"t{t}#r{r + 1}", {"judge": Status(("failed", "passed")[rng.random() < 0.5])}, f"t{t}"))
        # The new run was not repeated: its one attempt pairs with the base's three.
        new.append(_verdict(f"t{t}", {"judge": Status(("failed", "passed")[rng.random() < 0.7])}))
    got = compare_runs(base, new)
    j = got.graders[0]
    assert j.pairs == 40 and got.base_only == [] and got.new_only == []
    rates = {}
    for v in base:
        rates.setdefault(v.cluster, []).append(v.passed)
    d = [float(n.passed) - np.mean(rates[n.id]) for n in new]
    assert j.delta == pytest.approx(np.mean(d))
    assert j.delta_ci == stats.paired_mean_interval(d)
    assert j.p_value == stats.mcnemar_exact(sum(x < 0 for x in d), sum(x > 0 for x in d))
    assert compare_runs(base, new).to_dict() == got.to_dict()  # seeded: the same runs, the same numbers


def test_scores_get_a_paired_interval_of_the_mean_difference() -> None:
    rng = np.random.default_rng(9)
    xs, ys = rng.beta(2, 2, 60), rng.beta(3, 2, 60)
    base = [judge_sample(f"s{i}", [_result("sim", Status.PASSED, float(x))]) for i, x in enumerate(xs)]
    new = [judge_sample(f"s{i}", [_result("sim", Status.PASSED, float(y))]) for i, y in enumerate(ys)]
    g = compare_runs(base, new).graders[0]
    assert g.score_delta == pytest.approx(float(np.mean(ys - xs)))
    assert g.score_delta_ci == stats.paired_mean_interval(ys - xs)


def test_json_shape_is_the_documented_one() -> None:
    base, new = _runs(4, n=20)
    doc = compare_runs(base, new).to_dict()
    assert set(doc) == {"graders", "overall", "unpaired"}
    assert set(doc["unpaired"]) == {"base_only", "new_only"}
    required = {"grader", "base_pass_rate", "new_pass_rate", "delta", "delta_ci", "p_value", "to_fail", "to_pass"}
    for g in [*doc["graders"], doc["overall"]]:
        assert required <= set(g)
        assert isinstance(g["delta_ci"], list) and len(g["delta_ci"]) == 2
        assert all(isinstance(i, str) for i in g["to_fail"] + g["to_pass"])
    assert doc["overall"]["grader"] == "overall"


def test_regressions_need_a_fall_and_a_small_p() -> None:
    base = [_verdict(f"s{i}", {"a": Status.PASSED}) for i in range(30)]
    new = [_verdict(f"s{i}", {"a": Status.FAILED if i < 12 else Status.PASSED}) for i in range(30)]
    got = compare_runs(base, new)
    assert [g.grader for g in got.regressions(0.05)] == ["a", "overall"]
    assert compare_runs(new, base).regressions(0.05) == []  # an improvement is no regression
    few = compare_runs(base[:3], new[:3])
    assert few.regressions(0.05) == []  # three flips: p = 0.25


def test_flip_reasons_keep_their_phrases_and_read_as_before() -> None:
    from assay.core.messages import code_and_args
    from assay.graders.exact_match import difference_reason

    said = difference_reason("no", "yes")
    base = [judge_sample("s", [_result("a", Status.PASSED), _result("b", Status.PASSED)])]
    new = [judge_sample("s", [_result("a", Status.FAILED, reason=said), _result("b", Status.FAILED, reason="mine"),
                              _result("c", Status.ERROR)])]
    got = compare_runs(base, new, labels={"a": "精确匹配"})
    a = got.graders[0].to_fail[0]
    assert code_and_args(a.new_reason) == (said.code, said.args) and a.new_reason == said
    assert code_and_args(got.graders[1].to_fail[0].new_reason) == (None, None)  # user code's words stay theirs
    overall = got.overall.to_fail[0].new_reason
    assert overall == f"精确匹配: {said}; b: mine; c: error"  # the text reads as before codes
    code, args = code_and_args(overall)
    assert code == "list.items"
    assert args["items"] == [
        {"code": "compare.failing", "args": {"name": "精确匹配", "reason": {"code": said.code, "args": said.args}}},
        {"code": "compare.failing", "args": {"name": "b", "reason": "mine"}},
        {"code": "compare.no_reason.error", "args": {"name": "c"}}]
    assert got.to_dict()["overall"]["flips"][0]["new_reason"] == overall


def test_stored_codes_are_said_again_in_flips() -> None:
    """A result read back from storage has plain text and its code beside it; its flip's reason
    is the phrase again."""
    from assay.core.messages import code_and_args
    from assay.graders.exact_match import difference_reason

    said = difference_reason("no", "yes")
    stored = _result("a", Status.FAILED, reason=said)
    assert type(stored.reason) is str and stored.reason_code == said.code
    got = compare_runs([judge_sample("s", [_result("a", Status.PASSED)])], [judge_sample("s", [stored])])
    assert code_and_args(got.graders[0].to_fail[0].new_reason) == (said.code, said.args)
