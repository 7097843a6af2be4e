"""Sessions, CSRF and the language choice, over the app in process (no browser): the cookie
stands in for the bearer token only with the session's CSRF token on a change, sign-in and
sign-out refuse forged forms, and bearer clients are untouched."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient
from pages_support import seed

from assay.core.interfaces import Resources
from assay.server import create_app
from assay.server.pages.i18n import catalogue, from_accept_language, pick_language
from assay.server.pages.session import csrf_token
from assay.settings import Settings

BODY = {"name": "n", "type": "preset", "config": {"presetType": "contains", "params": {}}}


@pytest.fixture
def app(tmp_path):
    url = f"sqlite:///{tmp_path / 'assay.db'}"
    token = seed(url)
    with TestClient(create_app(Settings(database_url=url), resources=Resources())) as client:
        yield client, token


def signed_in(client: TestClient, token: str) -> None:
    form = client.get("/signin").text
    nonce = re.search(r'name="nonce" value="([^"]+)"', form).group(1)
    done = client.post("/signin", data={"token": token, "nonce": nonce, "next": "/tasks"}, follow_redirects=False)
    assert done.status_code == 303 and done.headers["location"] == "/tasks"
    cookie = done.headers["set-cookie"]
    assert "assay_session=" in cookie and "HttpOnly" in cookie and "SameSite=lax" in cookie


def test_pages_need_a_session_and_send_you_back_after_sign_in(app):
    client, token = app
    first = client.get("/runs/abc", follow_redirects=False)
    assert first.status_code == 303 and first.headers["location"] == "/signin?next=/runs/abc"
    signed_in(client, token)
    page = client.get("/runs/abc")
    assert page.status_code == 200 and 'id="assay-boot"' in page.text and "/static/run.js?v=" in page.text


def test_a_forged_or_bad_sign_in_is_refused(app):
    client, token = app
    client.get("/signin")
    forged = client.post("/signin", data={"token": token, "nonce": "guessed"}, follow_redirects=False)
    assert forged.status_code == 403 and "assay_session" not in forged.headers.get("set-cookie", "")
    form = client.get("/signin").text
    nonce = re.search(r'name="nonce" value="([^"]+)"', form).group(1)
    wrong = client.post("/signin", data={"token": "assay_nope", "nonce": nonce}, follow_redirects=False)
    assert wrong.status_code == 401
    nonce = re.search(r'name="nonce" value="([^"]+)"', wrong.text).group(1)  # each form has its own
    outside = client.post("/signin", data={"token": token, "nonce": nonce, "next": "//evil.example/"},
                          follow_redirects=False)
    assert outside.headers["location"] == "/evaluators"


def test_changes_through_the_cookie_need_the_csrf_token_and_the_same_origin(app):
    client, token = app
    signed_in(client, token)
    assert client.get("/api/v1/evaluators").status_code == 200
    refused = client.post("/api/v1/evaluators", json=BODY)
    assert refused.status_code == 403 and "CSRF" in refused.json()["message"]
    wrong = client.post("/api/v1/evaluators", json=BODY, headers={"X-CSRF-Token": csrf_token("another")})
    assert wrong.status_code == 403
    other_site = client.post("/api/v1/evaluators", json=BODY, headers={"X-CSRF-Token": csrf_token(token),
                                                                       "Origin": "https://evil.example"})
    assert other_site.status_code == 403 and "Origin" in other_site.json()["message"]
    made = client.post("/api/v1/evaluators", json=BODY, headers={"X-CSRF-Token": csrf_token(token)})
    assert made.status_code == 200, made.text
    page = client.get("/evaluators").text
    assert f'"csrf":"{csrf_token(token)}"' in page


def test_bearer_clients_are_left_alone(app):
    client, token = app
    assert client.post("/api/v1/evaluators", json=BODY, headers={"Authorization": f"Bearer {token}"}).status_code == 200
    assert client.get("/api/v1/evaluators").status_code == 401  # no cookie, no token


def test_sign_out_needs_the_csrf_token_and_ends_the_session(app):
    client, token = app
    signed_in(client, token)
    assert client.post("/signout", data={"csrf": "wrong"}, follow_redirects=False).status_code == 403
    out = client.post("/signout", data={"csrf": csrf_token(token)}, follow_redirects=False)
    assert out.status_code == 303 and 'assay_session=""' in out.headers["set-cookie"]
    client.cookies.clear()
    assert client.get("/evaluators", follow_redirects=False).status_code == 303


def test_a_draft_is_tested_without_saving_it(app):
    client, token = app
    signed_in(client, token)
    headers = {"X-CSRF-Token": csrf_token(token)}
    graded = client.post("/pages/api/evaluators/test", headers=headers,
                         json={**BODY, "input": "q", "output": "a cat", "expected": "cat"})
    assert graded.json()["data"]["passed"] is True
    bad = client.post("/pages/api/evaluators/test", headers=headers,
                      json={**BODY, "config": {"presetType": "regex", "params": {"pattern": "("}}, "input": "",
                            "output": "", "expected": None})
    assert bad.status_code == 422 and "config.params.pattern" in bad.json()["message"]
    assert [e for e in client.get("/api/v1/evaluators").json()["data"] if not e["isPreset"]] == []


@pytest.mark.parametrize(("cookie", "header", "lang"), [
    (None, "zh-CN,zh;q=0.9,en;q=0.8", "zh"),
    (None, "en-US,en;q=0.9,zh;q=0.8", "en"),
    (None, "fr-FR, zh;q=0.5", "zh"),
    (None, "de", "en"),
    (None, "en;q=0.2, zh-TW;q=0.7", "zh"),
    ("en", "zh-CN", "en"),
    ("xx", "zh-CN", "zh"),
])
def test_the_language_is_the_remembered_choice_else_the_browsers(cookie, header, lang):
    assert pick_language(cookie, header) == lang


def test_the_catalogues_have_the_same_keys_and_the_specs_labels():
    zh, en = catalogue("zh"), catalogue("en")
    assert zh.keys() == en.keys()
    assert [zh[f"evaluators.col.{k}"] for k in ("name", "type", "language", "updatedAt", "actions")] == [
        "名称", "类型", "语言", "更新时间", "操作"]
    assert (zh["evaluators.tab.presets"], zh["editor.runTest"], from_accept_language("")) == ("预置评估器", "运行测试", "en")
