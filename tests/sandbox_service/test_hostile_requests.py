"""Hostile requests at the sandbox service's door, in process with a fake runner (fast): every
answer is the spec's ``{success: false, error}`` with a fitting 4xx, and nothing runs."""

from __future__ import annotations

import json

import pytest
from starlette.testclient import TestClient

from assay.core.interfaces import CodeCall, CodeOutcome
from assay.sandbox_service import ServiceOptions, create_app

SECRET = "s3cret-for-the-door"
AUTH = {"Authorization": f"Bearer {SECRET}", "content-type": "application/json"}
EXECUTE = {"language": "python", "code": "def evaluate(i, o, e, m):\n    return {'passed': True}\n",
           "input": {"input": "q", "output": "a", "expected": "a"}}


class CountingRunner:
    """Answers every call with ``{passed: true}`` and counts them."""

    def __init__(self) -> None:
        self.calls = 0

    def call(self, request: CodeCall) -> CodeOutcome:
        self.calls += 1
        return CodeOutcome(value={"passed": True})

    def check(self, language: str, source: str, function: str = "evaluate") -> str | None:
        self.calls += 1
        return None


@pytest.fixture
def door():
    runner = CountingRunner()
    app = create_app(ServiceOptions(secret=SECRET, workers=1, max_body_bytes=4096), runner, {})
    with TestClient(app) as client:
        yield client, runner


def test_a_good_request_runs(door):
    client, runner = door
    answer = client.post("/execute", content=json.dumps(EXECUTE), headers=AUTH)
    assert answer.status_code == 200 and answer.json()["success"] is True and runner.calls == 1


@pytest.mark.parametrize("path", ["/execute", "/execute/batch", "/call", "/check"])
@pytest.mark.parametrize(("body", "headers", "status", "words"), [
    (b'{"language": "python", "language": "nodejs", "code": "x"}', {}, 400, "appears twice"),
    (b'{"language": "python", "code": "x", "timeout": NaN}', {}, 400, "NaN"),
    (b'{"language": "python", "code": "\\ud800"}', {}, 400, "lone surrogate"),
    (b'{"language": "python", "code": ' + b"[" * 2000 + b"]" * 2000 + b"}", {}, 400, "1,024 levels"),
    (json.dumps(EXECUTE).encode(), {"content-type": "text/plain"}, 415, "application/json"),
    (json.dumps(EXECUTE).encode(), {"content-encoding": "gzip"}, 415, "uncompressed"),
    (b"x" * 5000, {}, 413, "larger than 4096"),
])
def test_bad_bodies_are_refused_before_anything_runs(door, path, body, headers, status, words):
    client, runner = door
    answer = client.post(path, content=body, headers={**AUTH, **headers})
    assert answer.status_code == status, answer.text
    assert answer.json()["success"] is False and words in answer.json()["error"], answer.text
    assert runner.calls == 0


def test_a_chunked_body_over_the_limit_is_413(door):
    client, runner = door
    answer = client.post("/execute", content=(b" " * 1000 for _ in range(10)), headers=AUTH)
    assert answer.status_code == 413 and answer.json()["errorCode"] == "too_large" and runner.calls == 0


@pytest.mark.parametrize(("method", "path", "status"), [("GET", "/execute", 405), ("POST", "/nowhere", 404),
                                                        ("DELETE", "/call", 405)])
def test_unknown_routes_and_methods_answer_in_the_spec_shape(door, method, path, status):
    client, _ = door
    answer = client.request(method, path, headers=AUTH)
    assert answer.status_code == status and answer.json()["success"] is False and answer.json()["error"]


@pytest.mark.parametrize(("authorization", "status"), [
    (f"bearer {SECRET}", 200), (f"BEARER {SECRET}", 200), (f"Bearer {SECRET}x", 401), (f"Basic {SECRET}", 401),
    ("Bearer", 401), ("", 401), ("Bearer " + "x" * 10_000, 401),
])
def test_the_secret_is_checked_with_the_scheme_in_any_case(door, authorization, status):
    client, _ = door
    answer = client.post("/execute", content=json.dumps(EXECUTE),
                         headers={"Authorization": authorization, "content-type": "application/json"})
    assert answer.status_code == status, answer.text
