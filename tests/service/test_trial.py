"""One trial for the three test entries: the API route, its fast path and the editor's draft
test grade alike and answer alike, errors included (``server/trial.py``)."""

from __future__ import annotations

import pytest

PY_CODE = "def evaluate(input, output, expected, metadata):\n    return {'passed': output == expected, 'reason': 'compared'}\n"
SAMPLES = [{"input": "q", "output": "北京", "expected": "北京"}, {"input": "q", "output": "a", "expected": "b", "metadata": {"k": [1]}}]


def _draft(api, body, user="alice"):
    return api.client.post("/pages/api/evaluators/test", headers=api.as_(user), json=body)


def _same(stored, draft):
    assert stored.status_code == draft.status_code == 200, (stored.text, draft.text)
    a, b = stored.json()["data"], draft.json()["data"]
    for row in (a, b):  # times: the evaluation's own, and the wait around it
        assert row.pop("latencyMs") >= 0 and row.pop("waitMs") >= 0, row
    assert a == b


@pytest.mark.parametrize("evaluator", [
    {"type": "preset", "config": {"presetType": "regex", "params": {"pattern": "北|b", "flags": "i"}}},
    {"type": "code", "config": {"language": "python", "code": PY_CODE, "timeout": 5000}},
    {"type": "composite", "config": {"graders": [{"type": "exact_match"}, {"type": "contains", "name": "c"}],
                                     "rule": "any"}},
])
def test_a_draft_grades_as_the_stored_evaluator_does(sqlite_api, evaluator):
    created = sqlite_api.call("POST", "/evaluators", json={"name": "e", **evaluator})
    assert created.status_code == 200, created.text
    evaluator_id = created.json()["data"]["id"]
    for sample in SAMPLES:
        stored = sqlite_api.call("POST", f"/evaluators/{evaluator_id}/test", json=sample)
        _same(stored, _draft(sqlite_api, {"name": "e", **evaluator, **sample}))


def test_an_oversized_code_body_gets_one_answer_from_every_entry(tmp_path, shared_resources):
    from service_support import make_api

    api_iter = make_api(f"sqlite:///{tmp_path / 'a.db'}", shared_resources, api_max_code_bytes=200)
    api = next(api_iter)
    try:
        code = PY_CODE + "#" * 300
        config = {"language": "python", "code": code}
        created = api.call("POST", "/evaluators", json={"name": "big", "type": "code", "config": config})
        drafted = _draft(api, {"type": "code", "config": config, "input": "q", "output": "x"})
        assert created.status_code == drafted.status_code == 413
        one, other = created.json(), drafted.json()
        assert one.pop("requestId") != other.pop("requestId")  # each answer names its own request
        assert one == other
        assert "config.code" in drafted.json()["message"] and "ASSAY_API_MAX_CODE_BYTES" in drafted.json()["message"]
    finally:
        api_iter.close()
