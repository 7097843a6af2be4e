"""The fast path of ``POST /evaluators/{id}/test`` (``assay.server.fast_test``) against the route.

Two apps on one database, one with the fast path and one without, each served by uvicorn
(uvloop, httptools, as ``assay serve``) on a free port of 127.0.0.1 in a thread of this process.
Every case goes to both, and the answers must be the same to the byte: status, headers (but
``date``) and body; grading latencies are pinned so the bodies can be. A spy between the fast
path and the app says whether the fast path answered or handed the request on, and which body
bytes the app read.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx2 as httpx
import pytest
import uvicorn
from pg_server import free_port
from service_support import seed_users

from assay.server import create_app, trial
from assay.server.edge import Edge
from assay.server.fast_test import FastTest
from assay.server.otlp_status import OtlpStatus
from assay.settings import Settings

MAX_BODY = 64 << 10
PY_CODE = "def evaluate(input, output, expected, metadata):\n    return {'passed': output == expected}\n"
GOOD = {"input": "q", "output": "Paris", "expected": "Paris", "metadata": {"topic": "geography"}}


class Spy:
    """Stands between the fast path and the app: the requests the fast path handed on, each with
    the body bytes the app read."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.bodies: list[list[bytes]] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        self.bodies.append(chunks)

        async def reading() -> Any:
            message = await receive()
            if message["type"] == "http.request":
                chunks.append(message.get("body", b""))
            return message

        await self.app(scope, reading, send)


class Served:
    """An app under uvicorn in a thread (stopped by ``should_exit``, joined)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=self.port, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> Served:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            assert self.thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
            time.sleep(0.02)
        return self

    def __exit__(self, *_exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)


@dataclass
class Pair:
    """The app with the fast path and the app without, on one database."""

    fast: Served
    plain: Served
    spy: Spy
    tokens: dict[str, str]
    ids: dict[str, str] = field(default_factory=dict)
    client: httpx.Client = field(default_factory=lambda: httpx.Client(timeout=60))

    def send(self, served: Served, method: str, path: str, token: str | None = "alice",
             headers: dict[str, str] | None = None, **kwargs: Any) -> httpx.Response:
        sent = dict(headers or {})
        if "chunked" in kwargs:  # sent in pieces, without a Content-Length
            data = kwargs.pop("chunked")
            kwargs["content"] = _chunks(data, 4096 if len(data) > 4096 else 7)
        if token is not None:
            sent.setdefault("authorization", f"Bearer {self.tokens.get(token, token)}")
        sent.setdefault("x-request-id", "same-in-both")  # the answers' ids are equal, so are the answers
        return self.client.request(method, served.url + "/api/v1" + path, headers=sent, **kwargs)

    def both(self, method: str, path: str, **kwargs: Any) -> tuple[httpx.Response, bool]:
        """The same request to both apps: the fast app's answer (checked equal to the other's)
        and whether the fast path answered it."""
        self.spy.bodies.clear()
        fast = self.send(self.fast, method, path, **kwargs)
        plain = self.send(self.plain, method, path, **kwargs)
        assert (fast.status_code, _headers(fast), fast.content) == (plain.status_code, _headers(plain), plain.content)
        return fast, not self.spy.bodies

    def warm(self, evaluator: str, token: str = "alice") -> None:
        """Cache the evaluator's grader and the token in both apps (the route does)."""
        for served in (self.fast, self.plain):
            assert self.send(served, "POST", f"/evaluators/{self.ids[evaluator]}/test", token, json=GOOD).is_success


def _headers(response: httpx.Response) -> list[tuple[bytes, bytes]]:
    return [(name, value) for name, value in response.headers.raw if name.lower() != b"date"]


def _pinned(real: Any) -> Any:
    """``grade_one`` or ``grade_many`` with the latency pinned, so two answers can be equal."""

    def pinned(grader: Any, samples: Any) -> Any:
        result = real(grader, samples)
        if isinstance(result, list):
            return [r.model_copy(update={"latency_ms": 1.25}) for r in result]
        return result.model_copy(update={"latency_ms": 1.25})

    return pinned


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory, shared_resources: Any) -> Iterator[Pair]:
    import assay.service.coalesce as coalesce
    import assay.service.grading as grading

    url = f"sqlite:///{tmp_path_factory.mktemp('fast') / 'assay.db'}"
    tokens = seed_users(url)
    settings = Settings(database_url=url, api_max_body_bytes=MAX_BODY)
    fast_app = create_app(settings, resources=shared_resources)
    plain_app = create_app(settings, resources=shared_resources, fast_test=False)
    fast_app.middleware_stack = fast_app.build_middleware_stack()
    layer = fast_app.middleware_stack
    while not isinstance(layer, FastTest):
        layer = layer.app
    spy = layer.app = Spy(layer.app)
    for app in (fast_app, plain_app):  # no expiry while the module runs (the revocation test sets its own)
        app.state.service.tokens.ttl_s = 3600
    with pytest.MonkeyPatch.context() as patch, Served(fast_app) as fast, Served(plain_app) as plain:
        patch.setattr(grading, "grade_one", _pinned(grading.grade_one))
        patch.setattr(coalesce, "grade_many", _pinned(coalesce.grade_many))
        answer = trial.answer
        patch.setattr(trial, "answer", lambda result, wait_ms=0.0: answer(result, 0.0))  # the wait pinned too
        result = Pair(fast, plain, spy, tokens)
        presets = result.send(fast, "GET", "/evaluators/presets").json()["data"]
        result.ids.update({p["config"]["presetType"]: p["id"] for p in presets})
        created = result.send(fast, "POST", "/evaluators", json={"name": "eq", "type": "code",
                                                               "config": {"language": "python", "code": PY_CODE}})
        result.ids["python"] = created.json()["data"]["id"]
        yield result
        result.client.close()


def _body(value: Any) -> bytes:
    return json.dumps(value, ensure_ascii=False).encode()


def _chunks(data: bytes, size: int = 7) -> Iterator[bytes]:
    for start in range(0, len(data), size):
        yield data[start:start + size]


# (name, evaluator, request keywords, fast path answers)
CASES: list[tuple[str, str, dict[str, Any], bool]] = [
    ("plain", "exact_match", {"json": GOOD}, True),
    ("fails", "exact_match", {"json": {**GOOD, "output": "Lyon"}}, True),
    ("unicode", "exact_match", {"content": _body({"input": "问", "output": "巴黎 ✓ 😀", "expected": "巴黎 ✓ 😀"}),
                                "headers": {"content-type": "application/json"}}, True),
    ("escaped unicode", "contains", {"json": {"input": "", "output": "caf\u00e9 \U0001f600", "expected": "\U0001f600"}},
     True),
    ("NUL in output", "exact_match", {"json": {"input": "", "output": "a\x00b", "expected": "a\x00b"}}, True),
    ("nested metadata", "exact_match", {"json": {**GOOD, "metadata": {"a": {"b": [1, 2.5, None, True, "x", {}]}}}},
     True),
    ("big integer", "exact_match", {"content": b'{"input":"a","output":"b","expected":"b","metadata":{"n":%d}}'
                                    % 2**70, "headers": {"content-type": "application/json"}}, True),
    ("expected null", "exact_match", {"json": {"input": "", "output": "x", "expected": None}}, True),
    ("expected missing", "exact_match", {"json": {"input": "", "output": "x"}}, True),
    ("similarity", "similarity", {"json": {"input": "", "output": "the cat sat", "expected": "the cat sat down"}},
     True),
    ("regex", "regex", {"json": GOOD}, True),
    ("json_schema", "json_schema", {"json": {"input": "", "output": '{"a": 1}', "expected": None}}, True),
    ("charset", "exact_match", {"content": _body(GOOD),
                                "headers": {"content-type": "application/json; charset=utf-8"}}, True),
    ("lowercase scheme", "exact_match", {"json": GOOD, "token": None,
                                         "headers": {"authorization": "bearer {alice}"}}, True),
    ("chunked", "exact_match", {"chunked": _body(GOOD), "headers": {"content-type": "application/json"}},
     True),
    # handed on: the app answers as it always has
    ("too long to grade inline", "exact_match", {"json": {"input": "", "output": "x" * 9000, "expected": "x" * 9000}},
     False),
    ("missing field", "exact_match", {"json": {"input": "", "expected": "x"}}, False),
    ("extra field", "exact_match", {"json": {**GOOD, "extra": 1}}, False),
    ("output a number", "exact_match", {"json": {**GOOD, "output": 5}}, False),
    ("metadata a list", "exact_match", {"json": {**GOOD, "metadata": []}}, False),
    ("a JSON list", "exact_match", {"json": [GOOD]}, False),
    ("not JSON", "exact_match", {"content": b"hello", "headers": {"content-type": "application/json"}}, False),
    ("empty body", "exact_match", {"content": b"", "headers": {"content-type": "application/json"}}, False),
    ("truncated JSON", "exact_match", {"content": _body(GOOD)[:-3], "headers": {"content-type": "application/json"}},
     False),
    ("a key twice", "exact_match", {"content": b'{"input":"","output":"a","output":"b"}',
                                    "headers": {"content-type": "application/json"}}, False),
    ("NaN", "exact_match", {"content": b'{"input":"","output":"a","metadata":{"x":NaN}}',
                            "headers": {"content-type": "application/json"}}, False),
    ("over the limit", "exact_match", {"json": {**GOOD, "output": "x" * MAX_BODY}}, False),
    ("chunked over the limit", "exact_match", {"chunked": _body({**GOOD, "output": "x" * MAX_BODY}),
                                               "headers": {"content-type": "application/json"}}, False),
    ("chunked not JSON", "exact_match", {"chunked": b"{not json", "headers": {"content-type": "application/json"}},
     False),
    ("text/plain", "exact_match", {"content": _body(GOOD), "headers": {"content-type": "text/plain"}}, False),
    ("no content type", "exact_match", {"content": _body(GOOD)}, False),
    ("gzip", "exact_match", {"content": _body(GOOD), "headers": {"content-type": "application/json",
                                                                  "content-encoding": "gzip"}}, False),
    ("query string", "exact_match", {"json": GOOD, "params": {"x": "1"}}, False),
    ("unknown token", "exact_match", {"json": GOOD, "token": "not-a-token"}, False),
    ("no token", "exact_match", {"json": GOOD, "token": None}, False),
    ("basic auth", "exact_match", {"json": GOOD, "token": None, "headers": {"authorization": "Basic YTpi"}}, False),
    ("two spaces", "exact_match", {"json": GOOD, "token": None, "headers": {"authorization": "Bearer  {alice}"}},
     False),
    ("bearer alone", "exact_match", {"json": GOOD, "token": None, "headers": {"authorization": "Bearer"}}, False),
    ("code evaluator", "python", {"json": GOOD}, False),
    ("unknown evaluator", "nope", {"json": GOOD}, False),
]


@pytest.mark.parametrize(("evaluator", "kwargs", "fast"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_the_fast_path_answers_as_the_route_does(pair, evaluator, kwargs, fast):
    pair.warm("exact_match")
    if evaluator in pair.ids:
        pair.warm(evaluator)
    kwargs = dict(kwargs)
    if "headers" in kwargs:  # a token written into a header by hand
        kwargs["headers"] = {k: v.format(**pair.tokens) for k, v in kwargs["headers"].items()}
    response, answered = pair.both("POST", f"/evaluators/{pair.ids.get(evaluator, evaluator)}/test", **kwargs)
    assert answered == fast, response.text
    if fast:
        assert response.status_code == 200 and response.json()["code"] == 200, response.text


@pytest.mark.parametrize("method", ["GET", "PUT", "DELETE", "PATCH", "OPTIONS"])
def test_other_methods_go_to_the_app(pair, method):
    pair.warm("exact_match")
    response, answered = pair.both(method, f"/evaluators/{pair.ids['exact_match']}/test", content=_body(GOOD),
                                   headers={"content-type": "application/json"})
    assert not answered and response.status_code == 405


def test_a_grader_not_yet_cached_is_graded_by_the_route_then_by_the_fast_path(pair):
    for served in (pair.fast, pair.plain):
        served.app.state.service.grading.forget(pair.ids["contains"])
    response, answered = pair.both("POST", f"/evaluators/{pair.ids['contains']}/test", json=GOOD)
    assert not answered and response.status_code == 200
    response, answered = pair.both("POST", f"/evaluators/{pair.ids['contains']}/test", json=GOOD)
    assert answered and response.status_code == 200


def test_a_declined_request_reaches_the_app_with_its_whole_body(pair):
    pair.warm("exact_match")
    path = f"/evaluators/{pair.ids['exact_match']}/test"
    large = _body({"input": "", "output": "é" * 12_000, "expected": "é" * 12_000})  # valid, not graded inline
    for how in ("content", "chunked"):
        pair.spy.bodies.clear()
        response = pair.send(pair.fast, "POST", path, headers={"content-type": "application/json"}, **{how: large})
        assert response.status_code == 200 and response.json()["data"]["passed"] is True, response.text
        assert [b"".join(chunks) for chunks in pair.spy.bodies] == [large]


def test_a_token_revoked_while_cached_works_until_its_answer_expires_on_both(pair, tmp_path):
    from sqlalchemy import update

    from assay.store import Database
    from assay.store.models import ApiToken
    from assay.store.users import create_token, hash_token, revoke_token

    database = Database(pair.fast.app.state.service.database.url)
    with database.session() as session:
        pair.tokens["carol"] = create_token(session, "bob").secret
        pair.tokens["dave"] = create_token(session, "bob").secret
        session.commit()
    path = f"/evaluators/{pair.ids['exact_match']}/test"
    pair.warm("exact_match", "carol")
    pair.warm("exact_match", "dave")
    for served in (pair.fast, pair.plain):  # kept answers that outlast a loaded machine's pauses
        tokens = served.app.state.service.tokens
        tokens._entries = {k: (time.monotonic() + 60, p) for k, (_, p) in tokens._entries.items()}
    with database.session() as session:  # revoked elsewhere (another machine): no stamp moves here
        session.execute(update(ApiToken).where(ApiToken.token_hash == hash_token(pair.tokens["carol"]))
                        .values(revoked_at=ApiToken.created_at))
        session.commit()
    response, answered = pair.both("POST", path, token="carol", json=GOOD)
    assert answered and response.status_code == 200  # the kept answer holds until it expires
    for served in (pair.fast, pair.plain):
        tokens = served.app.state.service.tokens
        tokens._entries = {k: (0.0, p) for k, (_, p) in tokens._entries.items()}  # every answer expires
    response, answered = pair.both("POST", path, token="carol", json=GOOD)
    assert not answered and response.status_code == 401
    pair.warm("exact_match", "dave")
    services = [served.app.state.service for served in (pair.fast, pair.plain)]
    seen = [service.changes.seen["tokens"] for service in services]
    with database.session() as session:  # revoked with the counter: every server drops every kept answer
        revoke_token(session, pair.tokens["dave"])
        session.commit()
    deadline = time.monotonic() + 5  # the counter is polled (ASSAY_CHANGE_POLL_MS, 1 s)
    while any(service.changes.seen["tokens"] == before for service, before in zip(services, seen)):
        assert time.monotonic() < deadline, "the revocation did not reach the servers within 5 s"
        time.sleep(0.05)
    response, answered = pair.both("POST", path, token="dave", json=GOOD)
    assert not answered and response.status_code == 401
    database.dispose()


def test_the_openapi_document_is_the_same(pair):
    documents = [pair.client.get(served.url + "/openapi.json").json() for served in (pair.fast, pair.plain)]
    assert documents[0] == documents[1]
    assert "post" in documents[0]["paths"]["/api/v1/evaluators/{evaluator_id}/test"]


def test_the_fast_path_is_the_outermost_layer_of_the_app_but_the_edge(tmp_path: Path, shared_resources: Any):
    """Only the edge (request ids, security headers: every answer has them) is in front of it,
    and, around both, OTLP's rewriting of refusals, which passes any other path on at once."""
    app = create_app(Settings(database_url=f"sqlite:///{tmp_path / 'a.db'}"), resources=shared_resources)
    assert [m.cls for m in app.user_middleware[:3]] == [OtlpStatus, Edge, FastTest]
    plain = create_app(Settings(database_url=f"sqlite:///{tmp_path / 'b.db'}"), resources=shared_resources,
                       fast_test=False)
    assert FastTest not in [m.cls for m in plain.user_middleware]
    for each in (app, plain):
        each.state.service.database.dispose()
