"""Grading a slice: the results of slow evaluators are committed and counted in the run's
progress in small batches as they are graded, not when the whole slice is done; each result
is stored once, and counted once when a second holder grades the slice again."""

from __future__ import annotations

import time
from collections import Counter

import pytest
from service_support import make_api
from sqlalchemy import select

from assay.store import Database
from assay.store.models import EvaluationResult

SLOW = ("import time\n\ndef evaluate(input, output, expected, metadata):\n"
        "    time.sleep(0.2)\n    return {'passed': output == expected}\n")
SAMPLES = 12


@pytest.fixture
def api(tmp_path, shared_resources):
    yield from make_api(f"sqlite:///{tmp_path / 'assay.db'}", shared_resources, run_slots=1,
                        run_slice_size=SAMPLES, run_concurrency=4, queue_poll_ms=50)


def test_a_slices_results_show_in_progress_as_they_are_graded(api):
    code = api.call("POST", "/evaluators", json={"name": "slow", "type": "code",
                                                 "config": {"language": "python", "code": SLOW}}).json()["data"]
    task = api.call("POST", "/tasks", json={"name": "t", "evaluators": [{"evaluatorId": code["id"]}], "dataset": {
        "rows": [{"id": f"s{i}", "output": "x", "expected": "x"} for i in range(SAMPLES)]}}).json()["data"]
    run_id = api.call("POST", f"/tasks/{task['id']}/runs").json()["data"]["id"]
    seen: list[int] = []
    deadline = time.monotonic() + 120  # a bound against hanging, not a measure
    while (run := api.call("GET", f"/runs/{run_id}").json()["data"])["status"] != "completed":
        assert time.monotonic() < deadline, run
        seen.append(run["done"])
        time.sleep(0.02)
    assert run["done"] == SAMPLES and run["summary"]["samplesPassed"] == SAMPLES
    assert seen == sorted(seen) and max(seen) <= SAMPLES  # progress only moves forward
    database = Database(api.database_url)
    with database.session() as session:
        commits = Counter(session.scalars(select(EvaluationResult.created_at).where(EvaluationResult.run_id == run_id)))
        stored = session.scalars(select(EvaluationResult.sample_id).where(EvaluationResult.run_id == run_id)).all()
    database.dispose()
    # One slice, graded in several commits: the first as soon as its few samples (the run's
    # concurrency) were graded, each counted in the progress when committed.
    assert sorted(stored) == sorted(f"s{i}" for i in range(SAMPLES))
    assert len(commits) >= 2 and commits[min(commits)] == 4, commits


def test_a_slice_graded_again_by_a_second_holder_counts_only_what_it_stored(database, monkeypatch):
    """Two holders of one slice (the first's lease expired while it still graded): the second read
    which results were stored before the first committed them, so it grades them again; the
    insert skips them, and the run's progress counts each result once."""
    import json
    from concurrent.futures import ThreadPoolExecutor

    from assay.core.interfaces import Resources
    from assay.service.grading import Grading
    from assay.service.slices import SliceGrader
    from assay.settings import Settings
    from assay.store import datasets, queue
    from assay.store import runs as run_rows
    from assay.store import tasks as task_rows
    from assay.store.presets import PRESETS
    from assay.store.snapshot import RunEvaluator

    exact = PRESETS[0]  # exact_match
    with database.session() as session:
        dataset = datasets.create_dataset(session, name="d", description=None, created_by_id=None)
        version = datasets.begin_version(session, dataset.id, source_name="d.jsonl", format="jsonl", created_by_id=None)
        datasets.add_rows(session, version.id, [
            (i, f"s{i}", json.dumps({"id": f"s{i}", "output": "x", "expected": "x"})) for i in range(8)])
        datasets.finish_version(session, version.id, row_count=8, size_bytes=0, columns=["id", "output", "expected"])
        task = task_rows.create_task(session, name="t", description=None, dataset_id=None,
                                     evaluators=[(exact.id, 1.0)], created_by_id=None)
        specs = [RunEvaluator(exact.id, exact.name, "preset", exact.config, 1.0)]
        run_id = run_rows.create_run(session, task_id=task.id, evaluators=specs, samples=8, created_by_id=None,
                                     slice_size=4, dataset_version_id=version.id).id
        claim = queue.claim(session, "first", 30)
    assert claim is not None and claim.run_id == run_id
    with ThreadPoolExecutor(2) as pool:
        grader = SliceGrader(database, Grading(Settings(database_url=str(database.engine.url)), Resources()), pool, 2)
        assert grader.grade(claim, lambda: False)
        monkeypatch.setattr(run_rows, "graded_in_range", lambda *_args: set())  # read before the first's commit
        assert grader.grade(claim, lambda: False)
    with database.session() as session:
        run = run_rows.get_run(session, run_id)
        assert run is not None and run_rows.count_results(session, run_id) == 4
        assert run.done == 4 and run.status == "running"  # the other slice is still to grade
