"""Helpers of the online evaluation tests of the service (``test_online_api``, ``test_online_reads``)."""

from __future__ import annotations

import time

from assay.store import Database
from assay.store.online_models import OnlineSpan

PROTOBUF = {"Content-Type": "application/x-protobuf"}


def evaluator(api, pattern: str = "Paris") -> str:
    made = api.call("POST", "/evaluators", json={"name": "mentions " + pattern, "type": "preset",
                                                 "config": {"presetType": "regex", "params": {"pattern": pattern}}})
    assert made.status_code == 200, made.text
    return made.json()["data"]["id"]


def rule(api, evaluator_id: str, **fields) -> dict:
    body = {"name": "chat answers", "filter": 'gen_ai.operation.name == "chat"',
            "evaluators": [{"evaluatorId": evaluator_id}], **fields}
    made = api.call("POST", "/online-rules", json=body)
    assert made.status_code == 200, made.text
    return made.json()["data"]


def post(api, message, user: str = "alice", **headers):
    return api.client.post("/v1/traces", content=message.SerializeToString(),
                           headers={**api.as_(user), **PROTOBUF, **headers})


def results(api, rule_id: str, expect: int, timeout_s: float = 20.0) -> list[dict]:
    deadline = time.monotonic() + timeout_s
    while True:
        got = api.call("GET", f"/online-rules/{rule_id}/results").json()["data"]["results"]
        if len(got) >= expect or time.monotonic() > deadline:
            return got
        time.sleep(0.1)


def span_count(api) -> int:
    database = Database(api.database_url)
    try:
        with database.session() as session:
            return session.query(OnlineSpan).count()
    finally:
        database.dispose()
