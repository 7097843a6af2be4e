"""Summaries carry 95% intervals: clustered by the verdicts' ``cluster`` (repeats, trials),
with pass@k, pass^k and self-agreement; the same numbers when added up batch by batch."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as sst

from assay.core import stats
from assay.core.aggregate import judge_sample, summarize
from assay.core.result import GraderResult
from assay.runner.ray_engine import PartialSummary


def _verdicts(tasks: int, repeats: int, seed: int = 3) -> list:
    rng = np.random.default_rng(seed)
    out = []
    for t in range(tasks):
        p = rng.random()
        for r in range(repeats):
            status = "passed" if rng.random() < p else "failed"
            results = [GraderResult(name="judge", type="prompt", status=status, passed=status == "passed",
                                    score=float(status == "passed")),
                       GraderResult(name="flaky", type="t", status=rng.choice(["passed", "error"]), passed=False,
                                    score=None)]
            v = judge_sample(f"t{t}#r{r + 1}", results)
            v.cluster = f"t{t}" if repeats > 1 else None
            out.append(v)
    return out


def test_repeated_tasks_get_clustered_intervals_and_repeat_figures() -> None:
    verdicts = _verdicts(30, 4)
    s = summarize(verdicts)
    judge = s.graders[0]
    assert judge.intervals.clusters == 30
    passes = np.array([[v.results[0].status == "passed" for v in verdicts[t * 4:(t + 1) * 4]] for t in range(30)])
    se = stats.cluster_se(np.full(30, 4.0), passes.sum(axis=1).astype(float))
    assert judge.intervals.pass_rate == stats.rate_interval(float(passes.sum()), 120, (30, se))
    # Clustered is wider than treating the 120 attempts as independent.
    lo, hi = judge.intervals.pass_rate
    plain_lo, plain_hi = stats.wilson(passes.sum(), 120)
    assert hi - lo > plain_hi - plain_lo
    again = judge.intervals.repeats
    assert (again.k, again.tasks) == (4, 30)
    assert again.pass_at_k == pytest.approx(passes.any(axis=1).mean())
    assert again.pass_hat_k == pytest.approx(passes.all(axis=1).mean())
    doc = s.to_dict()
    assert doc["graders"][0]["repeats"]["pass_hat_k"] == again.pass_hat_k
    assert doc["graders"][1]["left_out"] == s.graders[1].errors > 0


def test_unclustered_summary_is_wilson_and_reports_what_was_left_out() -> None:
    verdicts = _verdicts(50, 1)
    s = summarize(verdicts)
    assert s.intervals.clusters is None and s.intervals.repeats is None
    assert s.intervals.pass_rate == stats.wilson(s.passed, s.passed + s.failed)
    assert s.to_dict()["left_out"] == s.errors + s.pending


def test_batch_by_batch_gives_the_same_intervals() -> None:
    verdicts = _verdicts(200, 1, seed=5)
    total = PartialSummary.of([])
    for i in range(0, len(verdicts), 33):
        total.add(PartialSummary.of(verdicts[i:i + 33]))
    assert total.take_intervals().to_dict() == summarize(verdicts).to_dict()


@pytest.mark.parametrize("pass_k", [None, 3])
def test_repeat_figures_match_the_scalar_estimators_on_uneven_tasks(pass_k: int | None) -> None:
    """Each task's pass@k from its own attempts at the run's k (the most attempts of any task
    unless given), tasks with fewer attempts than k apart (not a smaller k for the run)."""
    from assay.core.intervals import of_arrays

    rng = np.random.default_rng(8)
    sizes = rng.integers(1, 7, size=300)
    clusters = np.repeat(np.arange(300), sizes)
    passed = (rng.random(len(clusters)) < rng.random(300)[clusters]).astype(np.uint8)
    got = of_arrays(passed, passed.astype(float), clusters, pass_k=pass_k).repeats
    tallies = [(int(n), int(passed[clusters == t].sum())) for t, n in enumerate(sizes)]
    k = pass_k or int(sizes.max())
    full = [(n, c) for n, c in tallies if n >= k]
    assert (got.k, got.tasks, got.short) == (k, len(full), len(tallies) - len(full))
    assert list(got.short_tasks) == [t for t, (n, _) in enumerate(tallies) if n < k][:20]
    at = [stats.pass_at_k(n, c, k) for n, c in full]
    assert got.pass_at_k == pytest.approx(np.mean(at))
    assert got.pass_at_k_ci == pytest.approx(stats.bounded_interval(np.mean(at), sst.sem(at), len(at), most=len(at)))
    assert got.pass_hat_k == pytest.approx(np.mean([stats.pass_hat_k(n, c, k) for n, c in full]))
    agree = [stats.self_agreement(n, c) for n, c in tallies if n >= 2]
    assert (got.consistency, got.agreement_tasks) == (pytest.approx(np.mean(agree)), len(agree))
    lo, hi = got.consistency_ci
    assert lo < got.consistency < hi


def test_an_errored_attempt_sets_its_task_apart_and_keeps_k() -> None:
    """A suite of 5 repeats where one attempt of one task errored: pass@5 over the other tasks,
    that task named apart (before, k fell to 4 for the whole run)."""
    verdicts = []
    for t in range(6):
        for r in range(5):
            status = "error" if (t, r) == (2, 4) else ("passed" if r <= t % 3 else "failed")
            result = GraderResult(name="judge", type="prompt", status=status, passed=status == "passed",
                                  score=None if status == "error" else float(status == "passed"),
                                  error="runtime_error" if status == "error" else None)
            v = judge_sample(f"t{t}#r{r + 1}", [result])
            v.cluster = f"t{t}"
            verdicts.append(v)
    again = summarize(verdicts, pass_k=5).graders[0].intervals.repeats
    assert (again.k, again.tasks, again.short, again.short_tasks) == (5, 5, 1, ("t2",))
    assert again.pass_at_k == 1.0 and again.pass_at_k_ci[0] < 1.0  # every task passed once: still an interval
    doc = again.to_dict()
    assert doc["short_tasks"] == ["t2"] and doc["pass_at_k_ci"][1] == 1.0
    assert summarize(verdicts).graders[0].intervals.repeats.k == 5  # the most attempts, without pass_k
