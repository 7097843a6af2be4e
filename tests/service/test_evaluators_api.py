"""The evaluator API of the product specification, on SQLite and on PostgreSQL: the CRUD
flow, presets read-only, ownership, the test endpoint, and the error shapes."""

from __future__ import annotations

import time

import pytest

PY_CODE = "def evaluate(input, output, expected, metadata):\n    return {'passed': output == expected, 'reason': 'compared'}\n"
NODE_CODE = ("module.exports = async function evaluate(input, output, expected, metadata) {\n"
             "  const _ = require('lodash');\n"
             "  return { passed: _.includes(output, expected), score: output.includes(expected) ? 1 : 0.25 };\n"
             "};\n")


def create(api, user="alice", **body):
    body.setdefault("name", "eq")
    body.setdefault("type", "code")
    body.setdefault("config", {"language": "python", "code": PY_CODE})
    return api.call("POST", "/evaluators", user, json=body)


def test_presets_are_seeded_read_only_with_the_specifications_names(api):
    response = api.call("GET", "/evaluators/presets")
    assert response.status_code == 200 and response.json()["code"] == 200
    presets = response.json()["data"]
    assert [(p["name"], p["config"]["presetType"]) for p in presets] == [
        ("精确匹配", "exact_match"), ("包含匹配", "contains"), ("正则匹配", "regex"),
        ("JSON Schema", "json_schema"), ("相似度", "similarity")]
    assert presets[4]["config"]["params"] == {"threshold": 0.8, "algorithm": "levenshtein", "ignore_case": False,
                                              "normalize": "NFC", "max_length": 100_000}  # every field
    assert {p["description"] for p in presets} >= {"输出与期望完全一致", "文本相似度超过阈值"}
    some = presets[0]["id"]
    for method, kwargs in (("PUT", {"json": {"name": "x"}}), ("DELETE", {})):
        refused = api.call(method, f"/evaluators/{some}", "root", **kwargs)
        assert refused.status_code == 403 and refused.json()["code"] == 403
        assert "preset" in refused.json()["message"]


def test_crud_flow(api):
    created = create(api, description="exact, in Python")
    assert created.status_code == 200, created.text
    evaluator = created.json()["data"]
    assert evaluator["isPreset"] is False and evaluator["type"] == "code" and evaluator["language"] == "python"
    assert evaluator["config"] == {"language": "python", "code": PY_CODE, "timeout": 5000}
    assert set(evaluator) >= {"id", "name", "description", "type", "config", "isPreset", "createdAt", "updatedAt"}

    listed = api.call("GET", "/evaluators", params={"type": "code"}).json()["data"]
    assert [e["id"] for e in listed] == [evaluator["id"]]
    assert len(api.call("GET", "/evaluators").json()["data"]) == 6
    assert {e["type"] for e in api.call("GET", "/evaluators", params={"type": "preset"}).json()["data"]} == {"preset"}

    got = api.call("GET", f"/evaluators/{evaluator['id']}").json()["data"]
    assert got == evaluator

    changed = api.call("PUT", f"/evaluators/{evaluator['id']}", json={"name": "renamed", "config": {
        "language": "python", "code": PY_CODE, "timeout": 2000}})
    assert changed.status_code == 200, changed.text
    assert changed.json()["data"]["name"] == "renamed" and changed.json()["data"]["config"]["timeout"] == 2000
    assert changed.json()["data"]["updatedAt"] >= evaluator["updatedAt"]

    deleted = api.call("DELETE", f"/evaluators/{evaluator['id']}")
    assert deleted.status_code == 200 and deleted.json() == {"code": 200, "data": {"id": evaluator["id"]}}
    gone = api.call("GET", f"/evaluators/{evaluator['id']}")
    assert gone.status_code == 404 and gone.json()["code"] == 503001


def test_users_change_only_their_own_evaluators_and_admins_any(api):
    evaluator = create(api, "alice").json()["data"]
    for method, kwargs in (("PUT", {"json": {"name": "mine now"}}), ("DELETE", {})):
        refused = api.call(method, f"/evaluators/{evaluator['id']}", "bob", **kwargs)
        assert refused.status_code == 403 and "belongs to alice" in refused.json()["message"]
    assert api.call("GET", f"/evaluators/{evaluator['id']}", "bob").status_code == 200
    assert api.call("PUT", f"/evaluators/{evaluator['id']}", "root", json={"name": "admin's"}).status_code == 200
    assert api.call("DELETE", f"/evaluators/{evaluator['id']}", "root").status_code == 200


def test_test_endpoint_grades_presets_and_python_code(api):
    presets = {p["config"]["presetType"]: p["id"] for p in api.call("GET", "/evaluators/presets").json()["data"]}
    sample = {"input": "北京是哪个国家的首都？", "output": "中国", "expected": "中国"}
    result = api.call("POST", f"/evaluators/{presets['exact_match']}/test", json=sample)
    assert result.status_code == 200
    data = result.json()["data"]
    assert (data["passed"], data["score"], data["error"]) == (True, 1.0, None)
    assert data["latencyMs"] >= 0 and set(data) >= {"passed", "score", "reason", "latencyMs", "error"}
    missed = api.call("POST", f"/evaluators/{presets['contains']}/test",
                      json={"input": "", "output": "北京是中国的首都", "expected": "上海"}).json()["data"]
    assert missed["passed"] is False and missed["score"] == 0.0

    evaluator = create(api).json()["data"]
    graded = api.call("POST", f"/evaluators/{evaluator['id']}/test", json={**sample, "output": "日本"}).json()["data"]
    assert (graded["passed"], graded["score"], graded["reason"], graded["error"]) == (False, 0.0, "compared", None)


def test_user_code_problems_come_back_as_the_results_error(sqlite_api):
    raising = create(sqlite_api, config={"language": "python", "code": (
        "def evaluate(input, output, expected, metadata):\n    raise ValueError('no way')\n")}).json()["data"]
    data = sqlite_api.call("POST", f"/evaluators/{raising['id']}/test",
                           json={"input": "a", "output": "b", "expected": "c"}).json()["data"]
    assert data["error"] == "runtime_error" and data["passed"] is False and data["score"] is None
    assert "no way" in data["reason"]
    slow = create(sqlite_api, config={"language": "python", "timeout": 300, "code": (
        "def evaluate(input, output, expected, metadata):\n    while True:\n        pass\n")}).json()["data"]
    data = sqlite_api.call("POST", f"/evaluators/{slow['id']}/test",
                           json={"input": "a", "output": "b", "expected": "c"}).json()["data"]
    assert data["error"] == "timeout" and data["passed"] is False


@pytest.mark.node_sandbox
def test_nodejs_evaluator_is_created_and_tested(sqlite_api):
    created = create(sqlite_api, name="includes", config={"language": "nodejs", "code": NODE_CODE})
    assert created.status_code == 200, created.text
    evaluator = created.json()["data"]
    assert evaluator["language"] == "nodejs"
    answer = sqlite_api.call("POST", f"/evaluators/{evaluator['id']}/test",
                             json={"input": "q", "output": "北京是中国的首都", "expected": "首都"})
    assert answer.status_code == 200, answer.text
    passed = answer.json()["data"]
    assert (passed["passed"], passed["score"]) == (True, 1.0)
    failed = sqlite_api.call("POST", f"/evaluators/{evaluator['id']}/test",
                             json={"input": "q", "output": "abc", "expected": "z"}).json()["data"]
    assert (failed["passed"], failed["score"]) == (False, 0.25)
    broken = create(sqlite_api, config={"language": "nodejs", "code": "module.exports = function (a) {\n  return {\n"})
    assert broken.status_code == 422 and "line" in broken.json()["message"]


@pytest.mark.parametrize("body, field", [
    ({"type": "code", "config": {"language": "ruby", "code": "x"}}, "config.language"),
    ({"type": "code", "config": {"language": "python"}}, "config.code"),
    ({"type": "code", "config": {"language": "python", "code": PY_CODE, "timeout": 10 ** 9}}, "config.timeout"),
    ({"type": "code", "config": {"language": "python", "code": "def evaluate(:\n"}}, "line 1"),
    ({"type": "code", "config": {"language": "python", "code": "x = 1\n"}}, "no top-level function `evaluate`"),
    ({"type": "preset", "config": {"presetType": "regex", "params": {"pattern": "("}}}, "config.params.pattern"),
    ({"type": "preset", "config": {"presetType": "fuzzy"}}, "config.presetType"),
    ({"type": "sql", "config": {}}, "type"),
    ({"type": "code"}, "config: Field required"),
    ({"type": "code", "config": {}, "colour": "red"}, "colour: unknown field"),
    ({"type": "composite", "config": {"graders": [{"type": "program", "config": {"program": "id"}}]}},
     "config.graders[0].type: 'program' graders run programs on the server"),
    ({"type": "composite", "config": {"graders": [{"type": "waza_file", "config": {}}]}}, "config.graders[0].type"),
    ({"type": "llm", "config": {"rubric_file": "/etc/passwd"}}, "config.rubric_file: rubric_file is not accepted"),
    ({"type": "llm", "config": {"rubric": "r", "base_url": "http://203.0.113.9/v1"}}, "config.base_url"),
    ({"type": "llm", "config": {"rubric": "r", "api_key_env": "HOME"}}, "config.api_key_env"),
])
def test_invalid_evaluators_are_422_naming_the_field(sqlite_api, body, field):
    response = sqlite_api.call("POST", "/evaluators", json={"name": "bad", **body})
    assert response.status_code == 422, response.text
    assert response.json()["code"] == 422 and field in response.json()["message"]


def test_llm_and_composite_evaluators_are_created(sqlite_api):
    llm = create(sqlite_api, type="llm", config={"rubric": "Is it polite?", "scale": "binary"})
    assert llm.status_code == 200 and llm.json()["data"]["config"]["rubric"] == "Is it polite?"
    both = create(sqlite_api, type="composite", config={"rule": "all", "graders": [
        {"type": "contains", "name": "has"}, {"type": "regex", "name": "digits", "config": {"pattern": "\\d"}}]})
    assert both.status_code == 200, both.text
    data = sqlite_api.call("POST", f"/evaluators/{both.json()['data']['id']}/test",
                           json={"input": "", "output": "room 101", "expected": "room"}).json()["data"]
    assert data["passed"] is True and [c["name"] for c in data["details"]["children"]] == ["has", "digits"]


def test_tokens_are_required_and_checked(sqlite_api):
    client = sqlite_api.client
    assert client.get("/health").status_code == 200
    for headers in ({}, {"Authorization": "Bearer nope"}, {"Authorization": "Basic YTpi"}):
        response = client.get("/api/v1/evaluators", headers=headers)
        assert response.status_code == 401 and response.json()["code"] == 401
        assert response.headers["www-authenticate"] == "Bearer"


def test_a_revoked_token_stops_working(sqlite_api):
    from assay.store import Database
    from assay.store.users import revoke_token

    assert sqlite_api.call("GET", "/evaluators", "bob").status_code == 200
    database = Database(sqlite_api.database_url)
    with database.session() as session:
        revoke_token(session, sqlite_api.tokens["bob"])
    database.dispose()
    sqlite_api.client.app.state.service.tokens.ttl_s = 0  # the cache would keep it valid for a few seconds
    sqlite_api.client.app.state.service.tokens._entries.clear()
    assert sqlite_api.call("GET", "/evaluators", "bob").status_code == 401


def test_size_limits(sqlite_api):
    big = "x" * (1 << 20)
    response = sqlite_api.call("POST", "/evaluators", json={"name": "n", "type": "code",
                                                            "config": {"language": "python", "code": big}})
    assert response.status_code == 413 and response.json()["code"] == 413
    code = PY_CODE + "#" * (70 << 10)
    response = create(sqlite_api, config={"language": "python", "code": code})
    assert response.status_code == 413 and "config.code" in response.json()["message"]


def test_programs_over_the_api_only_when_the_operator_allows(tmp_path, shared_resources):
    from service_support import make_api

    for allow, status in ((True, 200), (False, 422)):
        url = f"sqlite:///{tmp_path / f'{allow}.db'}"
        for api in make_api(url, shared_resources, api_allow_programs=allow):
            response = create(api, type="composite", config={"graders": [
                {"type": "program", "config": {"program": "true"}}]})
            assert response.status_code == status, response.text


SIMILARITY_DEFAULTS = {"threshold": 0.8, "algorithm": "levenshtein", "ignore_case": False, "normalize": "NFC",
                       "max_length": 100_000}


def test_the_validated_config_is_stored_with_every_default_and_a_run_grades_that(api):
    """What is stored is what validated: a threshold sent as text is stored as the number it
    validated as, an omitted one as the default; the API shows every field, a composite's
    children included; a run's snapshot holds exactly that config, and the run page's data
    shows which threshold the run used."""
    sent = create(api, name="close", type="preset", config={"presetType": "similarity",
                                                            "params": {"threshold": "0.9"}})
    assert sent.status_code == 200, sent.text
    evaluator = sent.json()["data"]
    assert evaluator["config"] == {"presetType": "similarity", "params": {**SIMILARITY_DEFAULTS, "threshold": 0.9}}
    assert api.call("GET", f"/evaluators/{evaluator['id']}").json()["data"]["config"] == evaluator["config"]

    omitted = api.call("PUT", f"/evaluators/{evaluator['id']}", json={"config": {
        "presetType": "similarity", "params": {}}}).json()["data"]
    assert omitted["config"] == {"presetType": "similarity", "params": SIMILARITY_DEFAULTS}

    both = create(api, name="both", type="composite", config={"graders": [
        {"type": "contains"}, {"type": "similarity", "name": "near", "config": {"threshold": "0.5"}, "weight": 2}]})
    assert both.status_code == 200, both.text
    assert both.json()["data"]["config"] == {"rule": "all", "threshold": 0.5, "graders": [
        {"type": "contains", "name": "contains", "config": {"ignore_case": False}, "weight": 1.0},
        {"type": "similarity", "name": "near", "config": {**SIMILARITY_DEFAULTS, "threshold": 0.5}, "weight": 2.0}]}
    llm = create(api, name="judge", type="llm", config={"rubric": "Polite?", "threshold": "0.5"}).json()["data"]
    assert llm["config"]["threshold"] == 0.5 and llm["config"]["scale"] == "1-5" and llm["config"]["model"] is None

    task = api.call("POST", "/tasks", json={"name": "t", "evaluators": [{"evaluatorId": evaluator["id"]}],
                                            "dataset": {"rows": [{"id": "a", "output": "kitten", "expected": "sitting"},
                                                                 {"id": "b", "output": "same", "expected": "same"}]}})
    assert task.status_code == 200, task.text
    run = api.call("POST", f"/tasks/{task.json()['data']['id']}/runs").json()["data"]
    for _ in range(600):
        live = api.client.get(f"/pages/api/runs/{run['id']}/live", headers=api.as_("alice")).json()["data"]
        if live["status"] not in ("queued", "running"):
            break
        time.sleep(0.05)
    assert live["status"] == "completed", live
    assert [(e["evaluatorId"], e["config"], e["changedSince"]) for e in live["evaluators"]] == [
        (evaluator["id"], omitted["config"], False)]
    results = api.call("GET", f"/runs/{run['id']}/results").json()["data"]["items"]
    assert sorted((r["sampleId"], r["status"]) for r in results) == [("a", "failed"), ("b", "passed")]
