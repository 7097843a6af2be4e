"""Text with NUL characters (U+0000) behaves the same on SQLite and PostgreSQL, which refuses NUL
in text and JSONB: an evaluator's config, a dataset's rows and the results a run stores keep
their NULs (``store.clean`` escapes them on the way in and restores them on the way out), and
what grades is what was sent."""

from __future__ import annotations

import time

NUL = "a\x00b"
CODE = ("def evaluate(input, output, expected, metadata):\n"
        "    return {'passed': output == 'a\\x00b', 'reason': 'saw ' + output, 'details': {'seen': output, output: 1}}\n")
"""A Python evaluator whose source holds no NUL, but whose results do (reason, details keys and values)."""


def wait_done(api, run_id: str) -> dict:
    deadline = time.monotonic() + 60
    while (run := api.call("GET", f"/runs/{run_id}").json()["data"])["status"] in ("queued", "running"):
        assert time.monotonic() < deadline, run
        time.sleep(0.05)
    return run


def test_nuls_in_configs_rows_and_results_are_kept_and_graded(api):
    contains = api.call("POST", "/evaluators", json={"name": "has-nul", "type": "preset", "config": {
        "presetType": "regex", "params": {"pattern": "^a\x00b\uffff?$"}}})
    assert contains.status_code == 200, contains.text
    stored = api.call("GET", f"/evaluators/{contains.json()['data']['id']}").json()["data"]
    assert stored["config"]["params"]["pattern"] == "^a\x00b\uffff?$", stored  # given back as sent
    code = api.call("POST", "/evaluators", json={"name": "py", "type": "code",
                                                 "config": {"language": "python", "code": CODE}})
    assert code.status_code == 200, code.text

    rows = [{"id": "with", "input": "q\x00", "output": NUL, "expected": NUL},
            {"id": "without", "input": "q", "output": "ab", "expected": NUL}]
    task = api.call("POST", "/tasks", json={"name": "nul", "dataset": {"rows": rows}, "evaluators": [
        {"evaluatorId": contains.json()["data"]["id"]}, {"evaluatorId": code.json()["data"]["id"]}]})
    assert task.status_code == 200, task.text
    run = wait_done(api, api.call("POST", f"/tasks/{task.json()['data']['id']}/runs").json()["data"]["id"])
    assert run["status"] == "completed" and run["done"] == 4, run

    items = api.call("GET", f"/runs/{run['id']}/results", params={"limit": 10}).json()["data"]["items"]
    verdicts = {(r["sampleId"], r["evaluatorName"]): r for r in items}
    assert {key: r["passed"] for key, r in verdicts.items()} == {
        ("with", "has-nul"): True, ("with", "py"): True, ("without", "has-nul"): False, ("without", "py"): False}
    mine = verdicts[("with", "py")]
    assert mine["reason"] == "saw " + NUL and mine["details"]["seen"] == NUL and mine["details"][NUL] == 1, mine
