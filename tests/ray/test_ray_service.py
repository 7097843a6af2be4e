"""``ASSAY_RUN_ENGINE=ray``: a service run's slices graded on a local Ray by the Ray engine's
workers (``GradingActor``), the results batched into the database, equal to the local path's."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "service"))
from service_support import make_api  # noqa: E402

pytestmark = [pytest.mark.ray, pytest.mark.slow]

CODE = ("def evaluate(input, output, expected, metadata):\n"
        "    return {'passed': len(output) > 2, 'score': min(1.0, len(output) / 10), 'reason': 'length'}\n")
ROWS = [{"id": f"s{i}", "input": "q", "output": "abc"[: i % 4] + "x" * (i % 7), "expected": "abc"} for i in range(40)]


def graded(db_url: str, engine: str, task_id: str | None) -> tuple[str, list[tuple]]:
    apps = make_api(db_url, None, run_engine=engine, run_slice_size=16) if task_id is None else _again(db_url, engine)
    for api in apps:
        if task_id is None:
            presets = {p["config"]["presetType"]: p["id"]
                       for p in api.call("GET", "/evaluators/presets").json()["data"]}
            code = api.call("POST", "/evaluators", json={"name": "len", "type": "code",
                                                         "config": {"language": "python", "code": CODE}})
            evaluators = [{"evaluatorId": presets["exact_match"]}, {"evaluatorId": presets["contains"], "weight": 2},
                          {"evaluatorId": code.json()["data"]["id"]}]
            task_id = api.call("POST", "/tasks", json={"name": "t", "evaluators": evaluators,
                                                       "dataset": {"rows": ROWS}}).json()["data"]["id"]
        run_id = api.call("POST", f"/tasks/{task_id}/runs").json()["data"]["id"]
        deadline = time.monotonic() + 240
        while (run := api.call("GET", f"/runs/{run_id}").json()["data"])["status"] in ("queued", "running"):
            assert time.monotonic() < deadline, run
            time.sleep(0.1)
        assert run["status"] == "completed" and run["done"] == run["total"] == 120, run
        items = api.call("GET", f"/runs/{run_id}/results", params={"limit": 1000}).json()["data"]["items"]
        return task_id, sorted((r["sampleId"], r["evaluatorId"], r["status"], r["passed"], r["score"], r["reason"],
                                r["reasonCode"], json.dumps(r["reasonArgs"], sort_keys=True)) for r in items)
    raise AssertionError("no app")


def _again(db_url: str, engine: str):
    from fastapi.testclient import TestClient
    from service_support import Api

    from assay.server import create_app
    from assay.settings import Settings
    from assay.store import Database
    from assay.store.users import create_token

    database = Database(db_url)
    with database.session() as session:
        token = create_token(session, "alice").secret
    database.dispose()
    with TestClient(create_app(Settings(database_url=db_url, run_engine=engine, run_slice_size=16))) as client:
        yield Api(client, {"alice": token}, db_url)


def test_a_run_graded_on_ray_stores_the_local_paths_results(tmp_path):
    pytest.importorskip("ray")
    db_url = f"sqlite:///{tmp_path / 'assay.db'}"
    task_id, on_ray = graded(db_url, "ray", None)
    _, local = graded(db_url, "local", task_id)
    assert len(on_ray) == 120 and len({(s, e) for s, e, *_ in on_ray}) == 120
    assert on_ray == local  # reason codes and arguments included
    said = {(code, reason) for *_, reason, code, _ in on_ray if code or reason == "length"}
    assert {code for code, _ in said} == {"exact_match.differs_at", "contains.missing", None}
    assert (None, "length") in said  # user code's own reason: no code
