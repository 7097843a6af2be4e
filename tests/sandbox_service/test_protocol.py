"""The service over real HTTP: the product spec's ``POST /execute``, assay's extensions, the
secret, the size limits, ``GET /health``."""

from __future__ import annotations

import time

import httpx2 as httpx
import pytest
from service_process import SECRET

AUTH = {"Authorization": f"Bearer {SECRET}"}
PY_EQUAL = ("def evaluate(input, output, expected, metadata):\n"
            "    return {'passed': output == expected, 'reason': 'same' if output == expected else 'differs',\n"
            "            'details': {'seen': metadata.get('k')}}\n")
JS_EQUAL = ("module.exports = async function (input, output, expected, metadata) {\n"
            "  const _ = require('lodash');\n"
            "  return { passed: _.isEqual(output, expected), score: output === expected ? 1 : 0.25 };\n};\n")
SPIN = "def evaluate(input, output, expected, metadata):\n    while True:\n        pass\n"


def execute(service, code: str, language: str = "python", headers=AUTH, timeout: int = 3000, **item):
    body = {"language": language, "code": code, "timeout": timeout,
            "input": {"input": "q", "output": "a", "expected": "a", "metadata": {}, **item}}
    return httpx.post(service.url + "/execute", json=body, headers=headers, timeout=15)


@pytest.mark.parametrize(("language", "code", "output", "result"), [
    ("python", PY_EQUAL, "a", {"passed": True, "score": 1.0, "reason": "same", "details": {"seen": 7}}),
    ("python", PY_EQUAL, "b", {"passed": False, "score": 0.0, "reason": "differs", "details": {"seen": 7}}),
    pytest.param("nodejs", JS_EQUAL, "b", {"passed": False, "score": 0.25, "reason": None, "details": {}},
                 marks=pytest.mark.node_sandbox),
])
def test_execute_answers_in_the_spec_shape(service, language, code, output, result):
    answer = execute(service, code, language, output=output, metadata={"k": 7})
    assert answer.status_code == 200
    body = answer.json()
    assert body["success"] is True and body["result"] == result
    assert body["limits"]["timeout_ms"] == 3000 and body["limits"]["memory_mb"] == 128
    assert "seccomp" in body["limits"]["layers"] and body["durationMs"] > 0


@pytest.mark.parametrize(("code", "error_code", "words"), [
    ("def evaluate(i, o, e, m):\n    return 3\n", "invalid_output", "returned int"),
    ("def evaluate(i, o, e, m):\n    return {'passed': True, 'score': 2}\n", "invalid_output", "outside [0, 1]"),
    ("def evaluate(i, o, e, m)\n    return 1\n", "invalid_config", "line 1"),
    ("def evaluate(i, o, e, m):\n    print('hi')\n    raise ValueError('boom')\n", "runtime_error", "boom"),
    (SPIN, "timeout", "400 ms"),
])
def test_an_evaluator_that_fails_is_success_false_with_its_code(service, code, error_code, words):
    answer = execute(service, code, timeout=400)
    assert answer.status_code == 200
    body = answer.json()
    assert body["success"] is False and body["errorCode"] == error_code and words in body["error"], body


def test_the_traceback_and_the_output_come_along(service):
    body = execute(service, "def evaluate(i, o, e, m):\n    print('hi')\n    raise ValueError('boom')\n").json()
    assert body["output"] == "hi\n" and "ValueError: boom" in body["traceback"]


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer wrong"}, {"Authorization": SECRET},
                                     {"Authorization": f"Bearer {SECRET}x"}, {"Authorization": f"Bearer {SECRET[:-1]}"},
                                     {"Authorization": f"Basic {SECRET}"}])
def test_without_the_secret_401_and_nothing_runs(service, headers):
    started = time.monotonic()
    answer = execute(service, SPIN, headers=headers)
    assert answer.status_code == 401 and answer.json()["success"] is False
    assert answer.headers["www-authenticate"] == "Bearer"
    assert time.monotonic() - started < 2.5  # the 3 s spin never started
    assert httpx.get(service.url + "/health").json()["pool"]["running"] == 0
    for path in ("/execute/batch", "/call", "/check"):
        assert httpx.post(service.url + path, json={}, headers=headers).status_code == 401
    assert SECRET not in service.log()


def test_oversized_bodies_and_code_are_413(service):
    big = execute(service, PY_EQUAL, output="x" * 70_000)
    assert big.status_code == 413 and "65536" in big.json()["error"]

    def chunks():  # no Content-Length: the limit holds while the body streams in
        for _ in range(40):
            yield b"x" * 4096

    streamed = httpx.post(service.url + "/execute", content=chunks(), headers=AUTH)
    assert streamed.status_code == 413
    long_code = execute(service, PY_EQUAL + "#" * 5000)
    assert long_code.status_code == 413 and "4096" in long_code.json()["error"]


@pytest.mark.parametrize(("body", "words"), [
    (b"not json", "not JSON"),
    (b'{"language": "ruby", "code": "", "input": {}}', "language"),
    (b'{"language": "python", "code": "x", "input": {"metadata": []}}', "input.metadata"),
    (b'{"language": "python", "code": "x", "input": {}, "timeout": "5"}', "timeout"),
    (b'{"language": "python", "code": "x", "input": {}, "extra": 1}', "extra: unknown field"),
])
def test_malformed_bodies_are_400_naming_the_field(service, body, words):
    answer = httpx.post(service.url + "/execute", content=body, headers=AUTH)
    assert answer.status_code == 400 and words in answer.json()["error"], answer.text


def test_timeout_above_the_services_cap_is_refused(service):
    answer = httpx.post(service.url + "/execute", headers=AUTH, json={
        "language": "python", "code": PY_EQUAL, "input": {}, "timeout": 10_000_000}).json()
    assert answer["success"] is False and answer["errorCode"] == "invalid_config" and "timeout" in answer["error"]


def test_batch_answers_in_order_with_per_input_limits(service):
    code = ("import time\n"
            "def evaluate(input, output, expected, metadata):\n"
            "    while metadata.get('spin'):\n        pass\n"
            "    return {'passed': output == expected}\n")
    inputs = [{"output": "a", "expected": "a"}, {"output": "a", "expected": "b"},
              {"output": "a", "expected": "a", "metadata": {"spin": True}}, {"output": "c", "expected": "c"}]
    answer = httpx.post(service.url + "/execute/batch", headers=AUTH, timeout=15, json={
        "language": "python", "code": code, "inputs": inputs, "timeout": 500}).json()
    results = answer["results"]
    assert answer["success"] is True and len(results) == 4
    assert [r["result"]["passed"] for r in (results[0], results[1], results[3])] == [True, False, True]
    assert results[2]["success"] is False and results[2]["errorCode"] == "timeout"


def test_check_and_call(service):
    problem = httpx.post(service.url + "/check", headers=AUTH,
                         json={"language": "python", "code": "def evaluate(:\n"}).json()["problem"]
    assert "line 1" in problem
    assert httpx.post(service.url + "/check", headers=AUTH,
                      json={"language": "python", "code": PY_EQUAL}).json() == {"problem": None}
    called = httpx.post(service.url + "/call", headers=AUTH, json={
        "language": "python", "code": "def double(x):\n    return [x, x]\n", "function": "double", "args": [{"a": 1}],
        "memoryMb": 64}).json()
    assert called["success"] is True and called["value"] == [{"a": 1}, {"a": 1}] and called["limits"]["memory_mb"] == 64


def test_health_needs_no_secret_and_reports_layers_and_the_pool(service):
    health = httpx.get(service.url + "/health").json()
    assert health["status"] == "ok" and health["python"]["canRun"] is True and health["weakMode"] is False
    assert health["layers"]["seccomp"] is True and health["layers"]["landlock"] is True
    assert health["pool"] == {"workers": 2, "running": 0, "queued": 0, "queueLimit": 64}
