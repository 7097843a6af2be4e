"""A team on one server (issue 36 items 1-4), through the HTTP API, as alice, bob (plain users)
and root (admin): everyone reads everything and runs any task (the run is theirs); the owner
and admins change and delete, refusals name rows and owners by name; tasks and runs are
deleted, a refusal to delete lists the rows in the way; admins manage users, roles and tokens,
a plain user only their own tokens; every evaluator save is a version that runs name."""

from __future__ import annotations

from test_runs_api import presets, wait_for

CODE = "def evaluate(input, output, expected, metadata):\n    return {'passed': output == expected}\n"


def _evaluator(api, user="alice", name="对比"):
    made = api.call("POST", "/evaluators", user, json={"name": name, "type": "code",
                                                       "config": {"language": "python", "code": CODE}})
    assert made.status_code == 200, made.text
    return made.json()["data"]


def _task(api, evaluator_ids, user="alice", name="共享任务"):
    made = api.call("POST", "/tasks", user, json={
        "name": name, "evaluators": [{"evaluatorId": e} for e in evaluator_ids],
        "dataset": {"name": "行", "rows": [{"id": "a", "output": "x", "expected": "x"},
                                           {"id": "b", "output": "y", "expected": "x"}]}})
    assert made.status_code == 200, made.text
    return made.json()["data"]


def _as_running(api, run_id):
    """Mark a finished run as running again, in the database (a run that stays running for as
    long as a test needs)."""
    from sqlalchemy import text

    from assay.store import Database

    database = Database(api.database_url)
    try:
        with database.engine.begin() as connection:
            connection.execute(text("UPDATE runs SET status = 'running' WHERE id = :id"), {"id": run_id})
    finally:
        database.dispose()


def test_everyone_reads_and_runs_only_owners_and_admins_change(api):
    evaluator = _evaluator(api)
    task = _task(api, [evaluator["id"]])
    seen = api.call("GET", f"/evaluators/{evaluator['id']}", "bob").json()["data"]
    assert (seen["owner"], seen["createdById"]) == ("alice", evaluator["createdById"])
    assert api.call("GET", f"/tasks/{task['id']}", "bob").json()["data"]["owner"] == "alice"
    dataset = api.call("GET", f"/datasets/{task['datasetId']}", "bob").json()["data"]
    assert dataset["owner"] == "alice"

    # bob runs alice's task: the run is bob's, and only bob (or an admin) cancels or deletes it
    started = api.call("POST", f"/tasks/{task['id']}/runs", "bob")
    assert started.status_code == 200, started.text
    assert started.json()["data"]["startedBy"] == "bob"
    run = wait_for(api, started.json()["data"]["id"])
    assert run["createdById"] != evaluator["createdById"] and run["summary"]["samples"] == 2
    assert run["startedBy"] == "bob"
    assert [r["startedBy"] for r in api.call("GET", f"/tasks/{task['id']}/runs").json()["data"]] == ["bob"]
    refused = api.call("DELETE", f"/runs/{run['id']}", "alice")
    assert refused.status_code == 403 and "共享任务 (" in refused.json()["message"], refused.text
    assert "started by bob" in refused.json()["message"]

    for method, path, body in (("PUT", f"/evaluators/{evaluator['id']}", {"name": "bob's"}),
                               ("DELETE", f"/evaluators/{evaluator['id']}", None),
                               ("PUT", f"/tasks/{task['id']}", {"name": "bob's"}),
                               ("DELETE", f"/tasks/{task['id']}", None),
                               ("PATCH", f"/datasets/{task['datasetId']}", {"name": "bob's"})):
        refused = api.call(method, path, "bob", json=body)
        message = refused.json()["message"]
        assert refused.status_code == 403 and "belongs to alice" in message, (path, refused.text)
        assert evaluator["id"] not in message and task["id"] not in message  # names, never ids
        assert refused.json()["messageArgs"]["owner"] == "alice"
    assert api.call("PUT", f"/evaluators/{evaluator['id']}", "root", json={"description": "admin"}).status_code == 200
    assert api.call("PUT", f"/tasks/{task['id']}", "root", json={"description": "admin"}).status_code == 200


def test_tasks_and_runs_are_deleted_and_a_refusal_lists_what_blocks_it(api):
    evaluator = _evaluator(api)
    task = _task(api, [evaluator["id"]], name="用它的任务")
    run = wait_for(api, api.call("POST", f"/tasks/{task['id']}/runs").json()["data"]["id"])

    refused = api.call("DELETE", f"/evaluators/{evaluator['id']}")
    body = refused.json()
    assert refused.status_code == 409 and "'用它的任务'" in body["message"] and "'对比'" in body["message"]
    assert body["blocking"] == [{"kind": "task", "id": task["id"], "name": "用它的任务"}]
    refused = api.call("DELETE", f"/datasets/{task['datasetId']}")
    assert refused.status_code == 409 and refused.json()["blocking"] == [
        {"kind": "task", "id": task["id"], "name": "用它的任务"}]

    _as_running(api, run["id"])  # a run still going is cancelled first
    refused = api.call("DELETE", f"/runs/{run['id']}")
    assert refused.status_code == 409 and "'用它的任务 (" in refused.json()["message"], refused.text
    assert "is running; cancel it before deleting it" in refused.json()["message"]
    assert api.call("POST", f"/runs/{run['id']}/cancel").json()["data"]["status"] == "cancelled"
    deleted = api.call("DELETE", f"/runs/{run['id']}")
    assert deleted.status_code == 200 and api.call("GET", f"/runs/{run['id']}").status_code == 404
    assert api.call("GET", f"/runs/{run['id']}/results").status_code == 404
    assert api.call("DELETE", f"/runs/{run['id']}").status_code == 404
    assert api.call("DELETE", f"/tasks/{task['id']}").status_code == 200
    assert api.call("GET", f"/tasks/{task['id']}").status_code == 404
    assert api.call("DELETE", f"/evaluators/{evaluator['id']}").status_code == 200  # nothing blocks it now


def test_anyone_copies_a_dataset_as_theirs(api):
    task = _task(api, [presets(api)["exact_match"]])
    source = api.call("GET", f"/datasets/{task['datasetId']}").json()["data"]
    copied = api.call("POST", f"/datasets/{source['id']}/copy", "bob", json={"name": "我的副本"})
    assert copied.status_code == 200, copied.text
    data = copied.json()["data"]
    assert (data["name"], data["owner"], [v["number"] for v in data["versions"]]) == ("我的副本", "bob", [1])
    assert data["latest"]["rowCount"] == source["latest"]["rowCount"] == 2
    assert data["latest"]["columns"] == source["latest"]["columns"]
    rows = lambda dataset_id: [r["row"] for r in api.call("GET", f"/datasets/{dataset_id}/rows").json()["data"]["items"]]  # noqa: E731
    assert rows(data["id"]) == rows(source["id"])
    assert api.call("PATCH", f"/datasets/{data['id']}", "bob", json={"name": "改名"}).status_code == 200
    unnamed = api.call("POST", f"/datasets/{source['id']}/copy", "bob", json={}).json()["data"]
    assert unnamed["name"] == "行 (copy)"
    assert api.call("POST", f"/datasets/{'0' * 8}-0000-0000-0000-{'0' * 12}/copy", "bob", json={}).status_code == 404


def test_a_dataset_a_run_graded_lists_those_runs(api):
    task = _task(api, [presets(api)["exact_match"]], name="评测")
    run = wait_for(api, api.call("POST", f"/tasks/{task['id']}/runs").json()["data"]["id"])
    assert api.call("PUT", f"/tasks/{task['id']}", json={"datasetId": None}).status_code == 200
    refused = api.call("DELETE", f"/datasets/{task['datasetId']}")
    blocking = refused.json()["blocking"]
    assert refused.status_code == 409 and [(b["kind"], b["id"]) for b in blocking] == [("run", run["id"])]
    assert blocking[0]["name"].startswith("评测 (")


def test_admins_manage_users_roles_and_tokens_a_user_only_their_own_tokens(api):
    assert api.call("GET", "/users", "bob").status_code == 403
    assert api.call("POST", "/users", "bob", json={"name": "eve"}).status_code == 403
    listed = {u["name"]: u for u in api.call("GET", "/users", "root").json()["data"]}
    assert {"alice", "bob", "root"} <= set(listed) and listed["root"]["isAdmin"] and listed["alice"]["liveTokens"] == 1

    carol = api.call("POST", "/users", "root", json={"name": "carol"})
    assert carol.status_code == 200 and carol.json()["data"]["isAdmin"] is False, carol.text
    carol = carol.json()["data"]
    assert api.call("POST", "/users", "root", json={"name": "carol"}).status_code == 409
    for blank in ("", "   "):
        refused = api.call("POST", "/users", "root", json={"name": blank})
        assert refused.status_code == 422 and "name" in refused.json()["message"], refused.text

    issued = api.call("POST", f"/users/{carol['id']}/tokens", "root", json={"label": "笔记本"})
    assert issued.status_code == 200, issued.text
    secret = issued.json()["data"]["token"]
    me = api.client.get("/api/v1/users/me", headers={"Authorization": f"Bearer {secret}"}).json()["data"]
    assert (me["name"], me["isAdmin"]) == ("carol", False)
    tokens = api.call("GET", f"/users/{carol['id']}/tokens", "root").json()["data"]
    assert [(t["label"], t["revokedAt"]) for t in tokens] == [("笔记本", None)]
    assert all("token" not in t for t in tokens) and secret[:12] == tokens[0]["prefix"]

    # bob manages his own tokens, not carol's
    assert api.call("GET", f"/users/{carol['id']}/tokens", "bob").status_code == 403
    assert api.call("POST", f"/users/{carol['id']}/tokens", "bob", json={}).status_code == 403
    own = api.call("POST", "/users/me/tokens", "bob", json={"label": "mine"})
    assert own.status_code == 200 and own.json()["data"]["user"] == "bob"
    assert [t["label"] for t in api.call("GET", "/users/me/tokens", "bob").json()["data"]] == ["", "mine"]
    assert api.call("DELETE", f"/tokens/{tokens[0]['id']}", "bob").status_code == 404
    assert api.call("DELETE", f"/tokens/{tokens[0]['id']}", "root").status_code == 200
    assert api.client.get("/api/v1/users/me", headers={"Authorization": f"Bearer {secret}"}).status_code == 401

    # roles: carol made an admin may list users; the last admin cannot be demoted
    assert api.call("PATCH", f"/users/{carol['id']}", "bob", json={"isAdmin": True}).status_code == 403
    assert api.call("PATCH", f"/users/{carol['id']}", "root", json={"isAdmin": True}).json()["data"]["isAdmin"]
    root_id = listed["root"]["id"]
    assert api.call("PATCH", f"/users/{carol['id']}", "root", json={"isAdmin": False}).status_code == 200
    refused = api.call("PATCH", f"/users/{root_id}", "root", json={"isAdmin": False})
    assert refused.status_code == 409 and "last admin" in refused.json()["message"]
    bob_id = listed["bob"]["id"]
    assert api.call("PATCH", f"/users/{bob_id}", "root", json={"isAdmin": True}).status_code == 200
    assert api.call("GET", "/users", "bob").status_code == 200  # the new role applies at once


def test_every_save_is_a_version_and_a_run_names_the_one_that_graded(api):
    evaluator = _evaluator(api)
    assert evaluator["version"] == 1
    task = _task(api, [evaluator["id"]])
    first = wait_for(api, api.call("POST", f"/tasks/{task['id']}/runs").json()["data"]["id"])
    changed = CODE.replace("output == expected", "output != expected")
    saved = api.call("PUT", f"/evaluators/{evaluator['id']}", "root",
                     json={"config": {"language": "python", "code": changed}}).json()["data"]
    assert saved["version"] == 2
    second = wait_for(api, api.call("POST", f"/tasks/{task['id']}/runs", "bob").json()["data"]["id"])

    versions = api.call("GET", f"/evaluators/{evaluator['id']}/versions", "bob").json()["data"]
    assert [(v["number"], v["author"], v["current"]) for v in versions] == [(2, "root", True), (1, "alice", False)]
    assert versions[1]["config"]["code"] == CODE and versions[1]["config"]["timeout"] == 5000  # as stored
    one = api.call("GET", f"/evaluators/{evaluator['id']}/versions/1").json()["data"]
    assert one == versions[1]
    missing = api.call("GET", f"/evaluators/{evaluator['id']}/versions/9")
    assert missing.status_code == 404 and "'对比' has no version 9" in missing.json()["message"]
    assert api.call("GET", f"/evaluators/{evaluator['id']}/versions/0").status_code == 422

    graded = {run["id"]: api.client.get(f"/pages/api/runs/{run['id']}/live", headers=api.as_("bob")).json()["data"]["evaluators"][0]
              for run in (first, second)}
    assert (graded[first["id"]]["versionNumber"], graded[first["id"]]["changedSince"]) == (1, True)
    assert (graded[second["id"]]["versionNumber"], graded[second["id"]]["changedSince"]) == (2, False)

    # restoring version 1 is saving its fields again: version 3, the same config as version 1
    restored = api.call("PUT", f"/evaluators/{evaluator['id']}", json={"config": one["config"]}).json()["data"]
    assert restored["version"] == 3 and restored["config"] == one["config"]

    preset = presets(api)["regex"]
    assert [v["number"] for v in api.call("GET", f"/evaluators/{preset}/versions").json()["data"]] == [1]


def test_a_run_from_before_versions_names_the_version_with_its_config_or_says_it_predates_them(api):
    """Runs started before migration 0009 snapshotted no version number: the page links the
    saved version whose config is the one the run graded, or says the run predates the history."""
    from sqlalchemy import update

    from assay.store import Database
    from assay.store.models import Run

    evaluator = _evaluator(api)
    task = _task(api, [evaluator["id"]])
    runs = [wait_for(api, api.call("POST", f"/tasks/{task['id']}/runs").json()["data"]["id"])["id"]
            for _ in range(2)]
    database = Database(api.database_url)
    with database.session() as session:
        for run_id, code in zip(runs, (CODE, CODE.replace("==", "is"))):  # the second: a config no version has
            snapshot = session.get(Run, run_id).evaluators
            old = [{key: value for key, value in {**entry, "config": {**entry["config"], "code": code}}.items()
                    if key != "version"} for entry in snapshot]
            session.execute(update(Run).where(Run.id == run_id).values(evaluators=old))
    database.dispose()

    def graded(run_id):
        return api.client.get(f"/pages/api/runs/{run_id}/live", headers=api.as_("bob")).json()["data"]["evaluators"][0]

    matched, unknown = graded(runs[0]), graded(runs[1])
    assert (matched["versionNumber"], matched["matchedByConfig"], matched["predatesHistory"]) == (1, True, False)
    assert (unknown["versionNumber"], unknown["matchedByConfig"], unknown["predatesHistory"]) == (None, False, True)
    assert len(unknown["version"]) == 8  # the config's hash, shown beside the words


def test_an_admin_deactivates_a_user_whose_tokens_end_and_whose_rows_stay(api):
    """Deactivating: the user's tokens are revoked (their next call is 401), no token can be
    issued to them until an admin activates them again, and what they made stays, readable and
    named as theirs."""
    bob_id = api.call("GET", "/users/me", "bob").json()["data"]["id"]
    made = _evaluator(api, "bob", "鲍勃的评估器")
    assert api.call("POST", f"/users/{bob_id}/deactivate", "alice").status_code == 403  # admins only
    root_id = api.call("GET", "/users/me", "root").json()["data"]["id"]
    assert api.call("POST", f"/users/{root_id}/deactivate", "root").status_code == 409  # not oneself
    done = api.call("POST", f"/users/{bob_id}/deactivate", "root")
    assert done.status_code == 200 and done.json()["data"]["active"] is False, done.text
    assert done.json()["data"]["deactivatedAt"] is not None
    assert api.call("GET", "/users/me", "bob").status_code == 401  # his token is revoked at once
    listed = {u["name"]: u for u in api.call("GET", "/users", "root").json()["data"]}
    assert (listed["bob"]["active"], listed["bob"]["liveTokens"]) == (False, 0)
    kept = api.call("GET", f"/evaluators/{made['id']}", "alice").json()["data"]
    assert (kept["name"], kept["owner"]) == ("鲍勃的评估器", "bob")  # his rows stay, still his
    refused = api.call("POST", f"/users/{bob_id}/tokens", "root", json={"label": "again"})
    assert refused.status_code == 409 and "deactivated" in refused.json()["message"], refused.text
    assert api.call("POST", f"/users/{bob_id}/activate", "root").json()["data"]["active"] is True
    issued = api.call("POST", f"/users/{bob_id}/tokens", "root", json={"label": "again"}).json()["data"]
    again = api.client.get("/api/v1/users/me", headers={"Authorization": f"Bearer {issued['token']}"})
    assert again.status_code == 200 and again.json()["data"]["name"] == "bob"
