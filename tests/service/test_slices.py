"""Grading a slice: the results of slow evaluators are committed and counted in the run's
progress in small batches as they are graded, not when the whole slice is done; each result
is stored once."""

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
