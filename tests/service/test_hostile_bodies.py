"""Hostile and malformed request bodies against the API: each is a clear 4xx ``{code, message}``
that says what is wrong, never a 5xx, and nothing is stored."""

from __future__ import annotations

import json

import pytest

CODE = "def evaluate(input, output, expected, metadata):\n    return {'passed': output == expected}\n"
GOOD = {"name": "eq", "type": "code", "config": {"language": "python", "code": CODE}}
GOOD_TEXT = json.dumps(GOOD)


def post_raw(api, path: str, body: bytes, content_type: str | None = "application/json", **headers: str):
    if content_type is not None:
        headers["content-type"] = content_type
    return api.client.post("/api/v1" + path, content=body, headers={**api.as_("alice"), **headers})


def custom_count(api) -> int:
    return len(api.call("GET", "/evaluators?type=code").json()["data"])


@pytest.mark.parametrize(("body", "words"), [
    (GOOD_TEXT.replace('"eq"', "NaN").encode(), "NaN and Infinity are not JSON"),
    (GOOD_TEXT.replace('"eq"', "-Infinity").encode(), "NaN and Infinity are not JSON"),
    (GOOD_TEXT.replace('"eq"', "1e400").encode(), "too large for a double"),
    (GOOD_TEXT.replace('"eq"', "9" * 5000).encode(), "too large for a double"),
    (GOOD_TEXT.replace('"eq"', '"\\ud800"').encode(), "lone surrogate"),
    (GOOD_TEXT.replace('"eq"', '"\xff"').encode("latin-1"), "not UTF-8"),
    (b'{"name": "a", "name": "b", "type": "code", "config": {}}', "the key 'name' appears twice"),
    (b'{"name": "a", "type": "code", "config": {"code": "x", "code": "y"}}', "the key 'code' appears twice"),
    (b'{"name": "a", "type": "code", "config": ' + b'{"a": ' * 10_000 + b"1" + b"}" * 10_001, "1,024 levels"),
    (b'{"name": "a", ', "not valid JSON"),
])
def test_a_body_that_is_not_strict_json_is_400_and_nothing_is_stored(sqlite_api, body, words):
    before = custom_count(sqlite_api)
    response = post_raw(sqlite_api, "/evaluators", body)
    assert response.status_code == 400, response.text
    assert response.json()["code"] == 400 and words in response.json()["message"], response.text
    assert custom_count(sqlite_api) == before


def test_a_big_integer_that_fits_json_is_kept_exact(sqlite_api):
    preset = sqlite_api.call("GET", "/evaluators/presets").json()["data"][0]["id"]
    body = b'{"input": "a", "output": "b", "expected": "b", "metadata": {"n": %d}}' % 2**70
    response = post_raw(sqlite_api, f"/evaluators/{preset}/test", body)
    assert response.status_code == 200 and response.json()["data"]["passed"] is True


@pytest.mark.parametrize(("headers", "status", "words"), [
    ({"content_type": "text/plain"}, 415, "application/json"),
    ({"content_type": "application/x-www-form-urlencoded"}, 415, "application/json"),
    ({"content_type": "application/json", "content-encoding": "gzip"}, 415, "uncompressed"),
    ({"content_type": "application/json; charset=utf-8"}, 200, ""),
    ({"content_type": None}, 415, "without a Content-Type"),
])
def test_the_body_must_say_it_is_uncompressed_json(sqlite_api, headers, status, words):
    response = post_raw(sqlite_api, "/evaluators", GOOD_TEXT.encode(), **headers)
    assert response.status_code == status, response.text
    assert words in response.text


def test_a_chunked_body_over_the_limit_is_413(sqlite_api):
    chunks = (b" " * 65536 for _ in range(40))  # no Content-Length: counted as it arrives
    response = post_raw(sqlite_api, "/evaluators", chunks)
    assert response.status_code == 413 and response.json()["code"] == 413


@pytest.mark.parametrize(("field", "value"), [("name", "a\x00b"), ("description", "\x00")])
def test_a_nul_in_a_name_or_description_is_refused_naming_the_field(api, field, value):
    response = api.call("POST", "/evaluators", json={**GOOD, field: value})
    assert response.status_code == 422 and response.json()["message"].startswith(f"{field}: "), response.text
    task = api.call("POST", "/tasks", json={"name": "t", field: value, "evaluators": [{"evaluatorId": "x"}]})
    assert task.status_code == 422 and field in task.json()["message"]


@pytest.mark.parametrize("field", ["name", "type", "config"])
def test_null_is_refused_where_a_field_cannot_be_null(sqlite_api, field):
    created = sqlite_api.call("POST", "/evaluators", json=GOOD).json()["data"]
    response = sqlite_api.call("PUT", f"/evaluators/{created['id']}", json={field: None})
    assert response.status_code == 422 and response.json()["message"].startswith(f"{field}: may not be null")


@pytest.mark.parametrize("bad_id", ["%00", "a%00b", "..%2F..", "x" * 3000, "not-a-uuid",
                                    "00000000-0000-0000-0000-00000000000%00"])
def test_ids_that_are_not_row_ids_are_not_found(api, bad_id):
    for method, path in (("GET", f"/evaluators/{bad_id}"), ("PUT", f"/evaluators/{bad_id}"),
                         ("DELETE", f"/evaluators/{bad_id}"), ("POST", f"/evaluators/{bad_id}/test"),
                         ("GET", f"/tasks/{bad_id}"), ("GET", f"/runs/{bad_id}"),
                         ("GET", f"/runs/{bad_id}/results"), ("POST", f"/runs/{bad_id}/cancel")):
        body = {"json": {"input": "a", "output": "b"}} if path.endswith("/test") else \
            {"json": {"name": "n"}} if method == "PUT" else {}
        response = api.call(method, path, **body)
        assert response.status_code == 404, (method, path, response.text)
        assert len(response.json()["message"]) < 200


def test_the_result_filters_take_any_text(api):
    preset = api.call("GET", "/evaluators/presets").json()["data"][0]["id"]
    task = api.call("POST", "/tasks", json={"name": "t", "evaluators": [{"evaluatorId": preset}],
                                            "dataset": {"rows": [{"id": "a\x00", "input": "", "output": ""}]}})
    run = api.call("POST", f"/tasks/{task.json()['data']['id']}/runs").json()["data"]
    for query in ("sampleId=%00", "evaluatorId=%00", "evaluatorId=" + "x" * 500, "sampleId=a%00"):
        response = api.call("GET", f"/runs/{run['id']}/results?{query}")
        assert response.status_code == 200, (query, response.text)
