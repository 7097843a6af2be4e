"""A run's summary and the comparison of two runs come from the engine's own rules: the
stored results of generated runs give what ``core.aggregate`` and ``core.compare`` give for
the same results; ``GET /runs/{a}/compare/{b}`` and ``assay compare --service`` answer it."""

from __future__ import annotations

import random
import subprocess
import sys

import pytest
from test_fast_test import Served
from test_runs_api import make_task, presets, wait_for

from assay.core.aggregate import judge_sample, summarize
from assay.core.compare import compare_runs
from assay.core.result import ErrorCode, GraderResult, Status
from assay.service.run_summary import summarise
from assay.store import Database
from assay.store import runs as run_rows

STATUSES = ("passed", "passed", "failed", "error", "pending")


def _generated(rng: random.Random, evaluators: list[str], samples: int) -> list[dict]:
    rows = []
    for i in range(samples):
        for e in evaluators:
            if rng.random() < 0.1:
                continue  # not every evaluator graded every sample
            status = rng.choice(STATUSES)
            score = None if status in ("error", "pending") else rng.choice([None, rng.random()])
            rows.append({"sample_id": f"s{i}", "sample_index": i, "evaluator_id": e, "evaluator_name": f"n-{e[:4]}",
                         "status": status, "passed": status == "passed", "score": score, "reason": f"r{i}",
                         "details": {}, "error_code": "timeout" if status == "error" else None, "latency_ms": 1.0})
    return rows


def _core_verdicts(rows: list[dict], weights: dict[str, float]) -> list:
    by_sample: dict[str, list[GraderResult]] = {}
    for r in rows:
        by_sample.setdefault(r["sample_id"], []).append(GraderResult(
            name=r["evaluator_id"], type="t", status=r["status"], passed=r["passed"], score=r["score"],
            reason=r["reason"], error=ErrorCode.TIMEOUT if r["status"] == "error" else None,
            weight=weights[r["evaluator_id"]]))
    return [judge_sample(sid, results) for sid, results in by_sample.items()]


@pytest.mark.parametrize("seed", [1, 2])
def test_summarise_is_core_aggregate_on_generated_results(sqlite_api, seed: int) -> None:
    ids = list(presets(sqlite_api).values())[:3]
    task = make_task(sqlite_api, [{"evaluatorId": e} for e in ids])
    weights = {e: w for e, w in zip(ids, (1.0, 2.0, 0.5))}
    rng = random.Random(seed)
    database = Database(sqlite_api.database_url)
    try:
        with database.session() as session:
            run = run_rows.create_run(session, task_id=task["id"], evaluators=[], samples=0, created_by_id=None,
                                          slice_size=1)
            rows = _generated(rng, ids, 120)
            run_rows.add_results(session, [{"run_id": run.id, **r} for r in rows])
            session.commit()
            got = summarise(session, run.id, weights)
    finally:
        database.dispose()
    want = summarize(_core_verdicts(rows, weights))
    assert (got["samples"], got["samplesPassed"], got["samplesFailed"], got["samplesErrored"],
            got["samplesPending"]) == (want.total, want.passed, want.failed, want.errors, want.pending)
    assert got["passRate"] == want.pass_rate and got["meanScore"] == pytest.approx(want.mean_score)
    assert got["passRateCi"] == list(want.intervals.pass_rate) and got["leftOut"] == want.errors + want.pending
    for mine, theirs in zip(got["evaluators"], want.graders):
        assert mine["evaluatorId"] == theirs.name
        assert (mine["passed"], mine["failed"], mine["error"], mine["pending"]) == (
            theirs.passed, theirs.failed, theirs.errors, theirs.pending)
        assert mine["passRateCi"] == list(theirs.intervals.pass_rate)
        assert mine["meanScore"] == pytest.approx(theirs.mean_score)


def test_compare_endpoint_and_cli_on_two_real_runs(sqlite_api) -> None:
    exact = presets(sqlite_api)["exact_match"]
    base_rows = [{"id": f"q{i}", "output": "yes" if i < 30 else "no", "expected": "yes"} for i in range(40)]
    new_rows = [dict(r, output="no" if i < 10 else r["output"]) for i, r in enumerate(base_rows)]
    new_rows[35]["output"] = "yes"
    runs = []
    for rows in (base_rows, new_rows + [{"id": "extra", "output": "yes", "expected": "yes"}]):
        task = make_task(sqlite_api, [{"evaluatorId": exact}], rows=rows)
        started = sqlite_api.call("POST", f"/tasks/{task['id']}/runs").json()["data"]
        runs.append(wait_for(sqlite_api, started["id"])["id"])
    answer = sqlite_api.call("GET", f"/runs/{runs[0]}/compare/{runs[1]}")
    assert answer.status_code == 200, answer.text
    doc = answer.json()["data"]
    e = doc["graders"][0]
    assert e["evaluatorId"] == exact and e["grader"] == "精确匹配"
    assert (e["basePassRate"], e["newPassRate"]) == (0.75, 0.525)
    assert e["toFail"] == [f"q{i}" for i in range(10)] and e["toPass"] == ["q35"]
    assert doc["unpaired"] == {"baseOnly": [], "newOnly": ["extra"]}
    flip = e["flips"][0]  # the reason the product wrote, with its phrase beside it for the pages
    assert (flip["baseReason"], flip["baseReasonCode"], flip["baseReasonArgs"]) == (None, None, None)
    assert flip["newReason"] == "output differs from expected at character 0: got 'no', expected 'yes'"
    assert (flip["newReasonCode"], flip["newReasonArgs"]) == \
        ("exact_match.differs_at", {"index": 0, "got": "'no'", "expected": "'yes'"})
    overall = doc["overall"]["flips"][0]  # named by the evaluator's name, its own reason inside
    assert overall["newReason"] == f"精确匹配: {flip['newReason']}"
    assert (overall["newReasonCode"], overall["newReasonArgs"]) == \
        ("compare.failing", {"name": "精确匹配", "reason": {"code": flip["newReasonCode"],
                                                       "args": flip["newReasonArgs"]}})
    base_v = [judge_sample(r["id"], [GraderResult(name="x", type="t", status=Status.PASSED if r["output"] == "yes"
                                                  else Status.FAILED, passed=r["output"] == "yes",
                                                  score=float(r["output"] == "yes"))]) for r in base_rows]
    new_v = [judge_sample(r["id"], [GraderResult(name="x", type="t", status=Status.PASSED if r["output"] == "yes"
                                                 else Status.FAILED, passed=r["output"] == "yes",
                                                 score=float(r["output"] == "yes"))]) for r in new_rows]
    want = compare_runs(base_v, new_v).graders[0]
    assert e["pValue"] == want.p_value and e["deltaCi"] == list(want.delta_ci)
    assert sqlite_api.call("GET", f"/runs/{runs[0]}/compare/nope").status_code == 404

    with Served(sqlite_api.client.app) as served:
        cli = subprocess.run([sys.executable, "-m", "assay.cli.main", "compare", runs[0], runs[1], "--service",
                              served.url, "--fail-on-regression", "--json"], capture_output=True, text=True,
                             timeout=120, env={"ASSAY_TOKEN": sqlite_api.tokens["alice"], "PATH": "/usr/bin"})
        assert cli.returncode == 1, cli.stderr  # 10 lost, 1 gained: p = 0.012
        import json
        got = json.loads(cli.stdout)
        assert got["graders"][0]["to_fail"] == e["toFail"] and got["graders"][0]["p_value"] == e["pValue"]
        assert set(got["overall"]["flips"][0]) == {"id", "direction", "base_reason", "new_reason"}  # as for files
        assert (got["adjust"], got["tested"]) == ("holm", 2)  # the evaluator and the samples' verdicts
        for mine, theirs in zip([*got["graders"], got["overall"]], [*doc["graders"], doc["overall"]]):
            assert (mine["p_value_adjusted"], mine["detectable"], mine["test"], mine["present"]) == (
                theirs["pValueAdjusted"], theirs["detectable"], theirs["test"], theirs["present"])
        assert e["pValueAdjusted"] == pytest.approx(min(1.0, 2 * e["pValue"])) and e["test"] == "mcnemar"
        bh = subprocess.run([sys.executable, "-m", "assay.cli.main", "compare", runs[0], runs[1], "--service",
                             served.url, "--adjust", "bh", "--alpha", "0.01", "--json"], capture_output=True,
                            text=True, timeout=120, env={"ASSAY_TOKEN": sqlite_api.tokens["alice"], "PATH": "/usr/bin"})
        by_bh = json.loads(bh.stdout)
        direct = sqlite_api.call("GET", f"/runs/{runs[0]}/compare/{runs[1]}?adjust=bh&alpha=0.01").json()["data"]
        assert (by_bh["adjust"], by_bh["alpha"]) == ("bh", 0.01) == (direct["adjust"], direct["alpha"])
        assert by_bh["graders"][0]["p_value_adjusted"] == direct["graders"][0]["pValueAdjusted"]
        assert by_bh["graders"][0]["detectable"] == direct["graders"][0]["detectable"] != got["graders"][0]["detectable"]
        assert sqlite_api.call("GET", f"/runs/{runs[0]}/compare/{runs[1]}?adjust=sidak").status_code == 422
        denied = subprocess.run([sys.executable, "-m", "assay.cli.main", "compare", runs[0], runs[1], "--service",
                                 served.url], capture_output=True, text=True, timeout=120, env={"PATH": "/usr/bin"})
        assert denied.returncode == 2 and "401" in denied.stderr and "ASSAY_TOKEN" in denied.stderr
