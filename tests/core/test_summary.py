import math
import random

from assay.core.aggregate import judge_sample
from assay.core.result import GraderResult
from assay.core.summary import RunningSummary, summarize

STATUSES = ("passed", "failed", "error", "pending")


def res(name, status, score, error=None):
    return GraderResult(name=name, type="t", status=status, passed=status == "passed",
                        score=score if status in ("passed", "failed") else None, error=error)


def random_verdicts(n, seed=1):
    rng = random.Random(seed)
    out = []
    for i in range(n):
        results = []
        for name in ("a", "b", "c"):
            status = rng.choice(STATUSES)
            score = rng.choice([None, rng.random()]) if status in ("passed", "failed") else None
            results.append(res(name, status, score, "timeout" if status == "error" else None))
        v = judge_sample(f"task{i % 7}/run{i}", results, threshold=rng.choice([None, 0.5]))
        if rng.random() < 0.1:
            v.skipped = ["late"]
        out.append(v)
    return out


def test_chunked_adding_gives_the_one_pass_summary_to_the_bit():
    verdicts = random_verdicts(500)
    running = RunningSummary()
    for i in range(0, len(verdicts), 37):
        running.add(verdicts[i:i + 37])
    assert running.summary().to_dict() == summarize(verdicts).to_dict()
    assert [g.name for g in running.summary().graders] == ["a", "b", "c", "late"]


def test_summary_is_a_snapshot():
    verdicts = random_verdicts(20)
    running = RunningSummary().add(verdicts[:10])
    before = running.summary()
    running.add(verdicts[10:])
    assert before.to_dict() == summarize(verdicts[:10]).to_dict()


def test_outcomes_hold_each_decided_result_in_order_without_errors_or_pending():
    verdicts = random_verdicts(300)
    running = RunningSummary().add(verdicts)
    for name in ("a", "b", "c"):
        decided = [r for v in verdicts for r in v.results if r.name == name and r.status in ("passed", "failed")]
        col = running.graders[name]
        assert len(col) == len(decided) == running.summary().graders[("a", "b", "c").index(name)].passed + \
            running.summary().graders[("a", "b", "c").index(name)].failed
        assert list(col.passed) == [int(r.status == "passed") for r in decided]
        assert [None if math.isnan(x) else x for x in col.scores] == [r.score for r in decided]
    decided = [v for v in verdicts if v.status in ("passed", "failed")]
    assert list(running.verdicts.passed) == [int(v.passed) for v in decided]
    assert running.verdicts.clusters is None


def test_cluster_counts_per_task():
    verdicts = random_verdicts(300)
    running = RunningSummary(cluster_of=lambda sample_id: sample_id.split("/")[0]).add(verdicts)
    assert running.cluster_keys == [f"task{i}" for i in range(7)]
    passed, decided = running.graders["a"].cluster_counts(len(running.cluster_keys))
    for k, key in enumerate(running.cluster_keys):
        mine = [r for v in verdicts if v.id.startswith(key + "/") for r in v.results
                if r.name == "a" and r.status in ("passed", "failed")]
        assert decided[k] == len(mine) and passed[k] == sum(r.status == "passed" for r in mine)
    assert sum(decided) == len(running.graders["a"])
