"""Every length limit of what the API stores is checked before the database sees it, with a 422
that names the field and the limit, the same on SQLite (which would store any length) and on
PostgreSQL (whose ``varchar(n)`` would refuse it with a generic error); a value at the limit is
stored on both. A dataset made from an uploaded file takes the file's name cut to a name's limit."""

from __future__ import annotations

import pytest

from assay.store.models import NAME_MAX, SAMPLE_ID_MAX

PY = "def evaluate(input, output, expected, metadata):\n    return {'passed': True}\n"
DESCRIPTION_MAX = 4000


def evaluator(api) -> str:
    made = api.call("POST", "/evaluators", json={"name": "e", "type": "code", "config": {"language": "python",
                                                                                        "code": PY}})
    return made.json()["data"]["id"]


def bodies(api, n: int) -> dict[str, tuple[str, str, dict]]:
    """field -> (method, path, body) with that field ``n`` characters long."""
    ev = [{"evaluatorId": evaluator(api)}]
    row = {"input": "q", "output": "a"}
    return {
        "evaluator name": ("POST", "/evaluators", {"name": "x" * n, "type": "code",
                                                   "config": {"language": "python", "code": PY}}),
        "evaluator description": ("POST", "/evaluators", {"name": "d", "description": "x" * n, "type": "code",
                                                          "config": {"language": "python", "code": PY}}),
        "task name": ("POST", "/tasks", {"name": "x" * n, "evaluators": ev}),
        "task description": ("POST", "/tasks", {"name": "t", "description": "x" * n, "evaluators": ev}),
        "dataset name": ("POST", "/datasets", {"name": "x" * n}),
        "inline dataset name": ("POST", "/tasks", {"name": "t", "evaluators": ev,
                                                   "dataset": {"name": "x" * n, "rows": [{"id": "s", **row}]}}),
        "sample id": ("POST", "/tasks", {"name": "t", "evaluators": ev, "dataset": {"rows": [{"id": "x" * n, **row}]}}),
    }


LIMITS = {"evaluator name": ("name", NAME_MAX), "evaluator description": ("description", DESCRIPTION_MAX),
          "task name": ("name", NAME_MAX), "task description": ("description", DESCRIPTION_MAX),
          "dataset name": ("name", NAME_MAX), "inline dataset name": ("dataset.name", NAME_MAX),
          "sample id": ("id", SAMPLE_ID_MAX)}


@pytest.mark.parametrize("case", sorted(LIMITS))
def test_one_over_the_limit_is_422_naming_the_field_and_the_limit_and_at_it_is_stored(api, case):
    field, limit = LIMITS[case]
    method, path, body = bodies(api, limit + 1)[case]
    refused = api.call(method, path, json=body)
    message = refused.json()["message"]
    assert refused.status_code == 422 and field in message and f"{limit}" in message.replace(",", ""), refused.text
    method, path, body = bodies(api, limit)[case]
    stored = api.call(method, path, json=body)
    assert stored.status_code == 200, stored.text


def test_a_dataset_made_from_a_long_file_name_takes_it_cut_to_a_names_limit(api):
    task = api.call("POST", "/tasks", json={"name": "t", "evaluators": [{"evaluatorId": evaluator(api)}]})
    long_name = "f" * 290 + ".jsonl"
    uploaded = api.call("PUT", f"/tasks/{task.json()['data']['id']}/dataset",
                        files={"file": (long_name, b'{"id": "s", "input": "q", "output": "a"}\n')})
    assert uploaded.status_code == 200, uploaded.text
    assert uploaded.json()["data"]["datasetName"] == long_name  # the version keeps the file's name
    datasets = api.call("GET", "/datasets").json()["data"]
    names = [d["name"] for d in (datasets["items"] if isinstance(datasets, dict) else datasets)]
    assert any(len(name) == NAME_MAX and name.endswith(".jsonl") for name in names), names
