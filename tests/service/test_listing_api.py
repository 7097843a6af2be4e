"""Lists that scale (issue 22), on SQLite and PostgreSQL: evaluators, tasks and a task's runs
searched by name and description, filtered (type, language, owner, status), sorted and paged
on the server, the total in ``X-Total-Count``; without parameters a list is whole, as before."""

from __future__ import annotations

import pytest

CODE = {"python": "def evaluate(input, output, expected, metadata):\n    return {'passed': True}\n",
        "nodejs": "module.exports = function evaluate() { return { passed: true }; };\n"}


def make_evaluator(api, name, language="python", user="alice", description=None):
    body = {"name": name, "type": "code", "description": description,
            "config": {"language": language, "code": CODE[language]}}
    response = api.call("POST", "/evaluators", user, json=body)
    assert response.status_code == 200, response.text
    return response.json()["data"]


def listed(api, path, user="alice", **params):
    response = api.call("GET", path, user, params=params)
    assert response.status_code == 200, response.text
    return [e["name"] for e in response.json()["data"]], int(response.headers["X-Total-Count"])


def test_evaluators_are_searched_filtered_sorted_and_paged(api):
    for i in range(7):
        make_evaluator(api, f"长度检查 {i}", "python" if i % 2 else "nodejs", description="checks 100% of it")
    make_evaluator(api, "keyword check", user="bob", description="关键词")
    names, total = listed(api, "/evaluators")
    assert total == 13 and len(names) == 13  # 5 presets first, as before
    names, total = listed(api, "/evaluators", q="长度", sort="name", order="asc", limit=3, offset=3)
    assert (names, total) == (["长度检查 3", "长度检查 4", "长度检查 5"], 7)
    assert listed(api, "/evaluators", q="关键词")[0] == ["keyword check"]  # the description counts
    assert listed(api, "/evaluators", q="100%")[1] == 7  # LIKE's wildcards are literal
    assert listed(api, "/evaluators", q="100_")[1] == 0
    assert listed(api, "/evaluators", q="KEYWORD CHECK")[0] == ["keyword check"]
    assert listed(api, "/evaluators", language="python")[1] == 4 and listed(api, "/evaluators", language="nodejs")[1] == 4
    assert listed(api, "/evaluators", owner="bob")[0] == ["keyword check"]
    assert listed(api, "/evaluators", isPreset="false")[1] == 8 and listed(api, "/evaluators", isPreset="true")[1] == 5
    assert listed(api, "/evaluators", "bob", owner="me")[0] == ["keyword check"]
    assert listed(api, "/evaluators", type="code", sort="updatedAt", limit=1)[0] == ["keyword check"]
    bad = api.call("GET", "/evaluators", params={"sort": "config"})
    assert bad.status_code == 422 and "sort" in bad.json()["message"] and "updatedAt" in bad.json()["message"]
    nobody = api.call("GET", "/evaluators", params={"owner": "nobody"})
    assert nobody.status_code == 422 and "owner" in nobody.json()["message"]
    assert api.call("GET", "/evaluators", params={"limit": 0}).status_code == 422


@pytest.mark.parametrize("sort", ["name", "createdAt"])
def test_tasks_and_runs_are_paged(api, sort):
    evaluator = make_evaluator(api, "any")
    rows = [{"id": "s1", "input": "q", "output": "a", "expected": "a"}]
    for name in ("订单分类", "客服回答", "summaries"):
        body = {"name": name, "evaluators": [{"evaluatorId": evaluator["id"]}], "dataset": {"rows": rows}}
        assert api.call("POST", "/tasks", json=body).status_code == 200
    names, total = listed(api, "/tasks", sort=sort, order="asc", limit=2)
    assert total == 3 and len(names) == 2
    assert listed(api, "/tasks", q="客服")[0] == ["客服回答"]
    task_id = api.call("GET", "/tasks", params={"q": "客服"}).json()["data"][0]["id"]
    for _ in range(3):
        assert api.call("POST", f"/tasks/{task_id}/runs").status_code == 200
    runs = api.call("GET", f"/tasks/{task_id}/runs", params={"sort": "createdAt", "order": "desc", "limit": 2})
    assert runs.headers["X-Total-Count"] == "3" and len(runs.json()["data"]) == 2
    assert api.call("GET", f"/tasks/{task_id}/runs", params={"status": "bogus"}).status_code == 422


def test_datasets_are_searched_sorted_and_paged(api):
    for name, user in (("客服问答", "alice"), ("订单 100%", "alice"), ("summaries", "bob")):
        assert api.call("POST", "/datasets", user, json={"name": name, "description": "中文"}).status_code == 200
    names, total = listed(api, "/datasets")
    assert total == 3 and names == ["客服问答", "订单 100%", "summaries"]  # whole, oldest first, as before
    assert listed(api, "/datasets", sort="name", order="asc", limit=2, offset=1) == (["客服问答", "订单 100%"], 3)
    assert listed(api, "/datasets", q="100%") == (["订单 100%"], 1)
    assert listed(api, "/datasets", q="中文")[1] == 3  # the description counts
    assert listed(api, "/datasets", "bob", owner="me")[0] == ["summaries"]
    assert api.call("GET", "/datasets", params={"sort": "rows"}).status_code == 422


def test_the_owner_parameter_is_one_declaration_on_every_list(sqlite_api):
    """``owner`` is spelled once (``listing.OwnerQuery``): the three lists document it alike
    and refuse an unknown user alike, naming the parameter."""
    schema = sqlite_api.client.get("/openapi.json").json()["paths"]
    declared = [next(p for p in schema[f"/api/v1/{path}"]["get"]["parameters"] if p["name"] == "owner")
                for path in ("evaluators", "tasks", "datasets")]
    assert declared[0] == declared[1] == declared[2] and declared[0]["schema"]["anyOf"][0]["maxLength"] == 200
    for path in ("/evaluators", "/tasks", "/datasets"):
        nobody = sqlite_api.call("GET", path, params={"owner": "nobody"})
        assert nobody.status_code == 422 and "owner" in nobody.json()["message"], path
        assert sqlite_api.call("GET", path, params={"owner": "x" * 201}).status_code == 422, path
