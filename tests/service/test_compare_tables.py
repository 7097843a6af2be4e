"""A comparison from the runs' verdict tables (``service.run_compare``) answers exactly what
reading every result answers (``run_summary.compare``, the path it replaces), on both
databases: generated runs of a few thousand results with samples in one run only, evaluators
in one run only or renamed, errors, pending results, failures with and without reasons and
phrase codes. A run finished before the tables existed gets one at its first comparison; a
table whose run gained results since, or that was left without its final part, or that is
not bytes the service wrote, is never read as current; a run still grading is read afresh."""

from __future__ import annotations

import random

import pytest
from test_runs_api import make_task, presets, wait_for

from assay.server.schemas.common import Envelope
from assay.server.schemas.compare import ComparisonOut
from assay.service import run_compare, run_summary, verdict_table
from assay.store import Database, verdicts
from assay.store import runs as run_rows
from assay.store.models import RunState

STATUSES = ("passed", "passed", "passed", "failed", "failed", "error", "pending")


def _results(rng: random.Random, run_id: str, evaluators: list[str], ids: list[str], renamed: str) -> list[dict]:
    rows = []
    for index, sample in enumerate(ids):
        for e in evaluators:
            if rng.random() < 0.08:
                continue  # this evaluator has no result for this sample
            status = rng.choice(STATUSES)
            score = None if status in ("error", "pending") else rng.choice([None, 0.0, 1.0, rng.random()])
            reason, code, args = None, None, None
            if status != "passed" and rng.random() < 0.85:
                if rng.random() < 0.5:  # a reason the product wrote: its phrase's code kept
                    got = rng.choice(["no", "maybe", "否"])
                    reason = f"output differs from expected at character 0: got '{got}', expected 'yes'"
                    code, args = "exact_match.differs_at", {"index": 0, "got": f"'{got}'", "expected": "'yes'"}
                else:
                    reason = f"judge says {rng.randint(0, 9)} for {sample}"
            rows.append({"run_id": run_id, "sample_id": sample, "sample_index": index, "evaluator_id": e,
                         "evaluator_name": f"{renamed if e == evaluators[0] else 'n'}-{e[:4]}", "status": status,
                         "passed": status == "passed", "score": score, "reason": reason, "reason_code": code,
                         "reason_args": args, "details": {}, "error_code": "timeout" if status == "error" else None,
                         "latency_ms": 1.0})
    return rows


def _two_runs(api, seed: int, samples: int = 1200) -> tuple[Database, list[tuple[str, dict[str, float]]]]:
    """Two finished runs written as a release before the verdict tables would have: results only."""
    evaluators = list(presets(api).values())[:5]
    task = make_task(api, [{"evaluatorId": e} for e in evaluators[:3]])
    rng = random.Random(seed)
    shared = [f"s{i:05d}" for i in range(samples)] + ["问题 一", 'a "quoted"\\ id\nwith a line', "😀 \ud7ff"]
    base_ids = shared + [f"only-base-{i}" for i in range(25)]
    new_ids = [s for s in shared if rng.random() > 0.03] + [f"only-new-{i}" for i in range(40)]
    rng.shuffle(new_ids)  # the new version's order is not the base's
    database = Database(api.database_url)
    runs = []
    with database.session() as session:
        for ids, used, renamed in ((base_ids, evaluators[:4], "old"), (new_ids, evaluators[1:5], "new")):
            run = run_rows.create_run(session, task_id=task["id"], evaluators=[], samples=0, created_by_id=None,
                                      slice_size=1)
            run_rows.add_results(session, _results(rng, run.id, used, ids, renamed))
            run_rows.set_status(session, run.id, RunState.COMPLETED)
            runs.append((run.id, {e: rng.choice([1.0, 2.0, 0.5]) for e in used}))
    return database, runs


def _fast(session, base, new, **options):
    return run_compare.compare(session, (run_rows.get_run(session, base[0]), base[1]),
                               (run_rows.get_run(session, new[0]), new[1]), **options)


def _no_reading_every_result(*args, **kwargs):
    raise AssertionError("compared by reading every result, not from the tables")


def _same(fast: dict, slow: dict) -> None:
    assert fast == slow
    for f, s in zip([*fast["graders"], fast["overall"]], [*slow["graders"], slow["overall"]]):
        assert [type(x["new_reason"]) for x in f["flips"]] == [type(x["new_reason"]) for x in s["flips"]]


@pytest.mark.parametrize("seed", [3, 4])
def test_the_tables_answer_what_every_result_answers(api, seed, monkeypatch) -> None:
    monkeypatch.setattr(verdicts, "PART_SAMPLES", 97)  # several parts per run, joined when read
    database, (base, new) = _two_runs(api, seed)
    try:
        with database.session() as session:
            assert verdicts.read(session, base[0]) is None  # a run from before the tables
            slow = run_summary.compare(session, base, new)
            assert sum(len(g["flips"]) for g in slow["graders"]) > 300 and slow["unpaired"]["new_only"]
            assert {g["present"] for g in slow["graders"]} == {"both", "base", "new"}
            _same(_fast(session, base, new), slow)  # made from the results, and stored
        monkeypatch.setattr(run_compare, "compare_streamed", _no_reading_every_result)
        with database.session() as session:
            for run_id, _ in (base, new):
                stored = verdicts.read(session, run_id)
                assert stored is not None and len(stored) > 10
            assert verdicts.read(session, base[0]) is not None
            _same(_fast(session, base, new), slow)  # from the stored tables
            _same(_fast(session, base, new, adjust="bh", alpha=0.01),
                  run_summary.compare(session, base, new, adjust="bh", alpha=0.01))
            _same(_fast(session, new, base), run_summary.compare(session, new, base))
        answer = api.call("GET", f"/runs/{base[0]}/compare/{new[0]}")  # what FastAPI wrote from the model before
        assert answer.status_code == 200 and answer.headers["content-type"] == "application/json"
        # (the route weighs by the runs' snapshots: these runs have none, every weight is 1)
        with database.session() as session:
            unweighted = run_summary.compare(session, (base[0], {}), (new[0], {}))
        assert answer.json() == Envelope(data=ComparisonOut.model_validate(unweighted)).model_dump(mode="json")
    finally:
        database.dispose()


def test_a_table_is_current_only_while_its_run_is_as_it_was_read(api) -> None:
    database, (base, new) = _two_runs(api, 5, samples=300)
    try:
        with database.session() as session:
            _fast(session, base, new)
            kept = verdicts.read(session, new[0])
            late = _results(random.Random(6), new[0], list(new[1])[:1], ["late-sample"], "new")
            run_rows.add_results(session, late)  # e.g. stored by a slice still grading after a cancel
            session.commit()
            _same(_fast(session, base, new), run_summary.compare(session, base, new))
            assert "late-sample" in _fast(session, base, new)["unpaired"]["new_only"]
            assert verdicts.read(session, new[0]) != kept  # written again, with it

            verdicts.clear(session, new[0])  # a crash after the first part: no final part
            verdicts.add_part(session, new[0], 0, 1, kept[0], final=False)
            session.commit()
            assert verdicts.read(session, new[0]) is None
            _same(_fast(session, base, new), run_summary.compare(session, base, new))

            verdicts.clear(session, new[0])
            verdicts.add_part(session, new[0], 0, 1, b"AVT1\x00\x00\x00\x00garbage", final=True)
            session.commit()
            with pytest.raises(verdict_table.Unreadable):
                verdict_table.read(verdicts.read(session, new[0]))
            _same(_fast(session, base, new), run_summary.compare(session, base, new))
            assert verdict_table.read(verdicts.read(session, new[0])).counts == verdicts.status_counts(session, new[0])

            run_rows.set_status(session, base[0], RunState.RUNNING)  # still grading: never stored
            verdicts.clear(session, base[0])
            session.commit()
            _same(_fast(session, base, new), run_summary.compare(session, base, new))
            assert verdicts.read(session, base[0]) is None
    finally:
        database.dispose()


def test_a_run_that_completes_writes_its_table(api) -> None:
    ids = presets(api)
    task = make_task(api, [{"evaluatorId": ids["exact_match"], "weight": 2}, {"evaluatorId": ids["contains"]}])
    run = wait_for(api, api.call("POST", f"/tasks/{task['id']}/runs").json()["data"]["id"])
    assert run["status"] == "completed"
    database = Database(api.database_url)
    try:
        with database.session() as session:
            table = verdict_table.read(verdicts.read(session, run["id"]))
            results = run_rows.list_results(session, run_rows.results_query(run["id"]), limit=1000, offset=0)[0]
            assert table.columns.ids == list(dict.fromkeys(r.sample_id for r in results))
            assert table.counts == verdicts.status_counts(session, run["id"])
            assert table.weights == {ids["exact_match"]: 2.0, ids["contains"]: 1.0}
            assert table.names == {ids["exact_match"]: "精确匹配", ids["contains"]: "包含匹配"}
    finally:
        database.dispose()
