"""Hostile input at the pages, in process (no browser): sign-in never redirects off the
server, every change through the session cookie needs the CSRF token, and markup in names,
ids and paths reaches the page only as text."""

from __future__ import annotations

import re

import pytest
from fastapi.testclient import TestClient
from pages_support import seed

from assay.core.interfaces import Resources
from assay.server import create_app
from assay.server.pages.session import csrf_token
from assay.settings import Settings

XSS = "<img src=x onerror=alert(1)></script><script>alert(2)</script>"
PRESET = {"type": "preset", "config": {"presetType": "contains", "params": {}}}


@pytest.fixture
def site(tmp_path):
    url = f"sqlite:///{tmp_path / 'assay.db'}"
    token = seed(url)
    with TestClient(create_app(Settings(database_url=url), resources=Resources())) as client:
        yield client, token


def sign_in(client: TestClient, token: str, next_path: str) -> str:
    form = client.get("/signin").text
    nonce = re.search(r'name="nonce" value="([^"]+)"', form).group(1)
    done = client.post("/signin", data={"token": token, "nonce": nonce, "next": next_path}, follow_redirects=False)
    assert done.status_code == 303
    return done.headers["location"]


@pytest.mark.parametrize("target", [
    "//evil.example/", "https://evil.example/", "/\\evil.example", "\\/evil.example", "javascript:alert(1)",
    "/\t/evil.example", "/\n/evil.example", "/\r\n/evil.example", " //evil.example", "/ /evil.example",
    "/\x00/evil.example", "/" + "a" * 3000,
])
def test_sign_in_never_sends_you_off_the_server(site, target):
    client, token = site
    assert sign_in(client, token, target) == "/evaluators"
    again = client.get("/signin", params={"next": target}, follow_redirects=False)  # signed in already
    assert again.status_code == 303 and again.headers["location"] == "/evaluators"


def test_a_path_on_the_server_is_where_sign_in_sends_you(site):
    client, token = site
    assert sign_in(client, token, "/runs/abc?tab=failed") == "/runs/abc?tab=failed"


def test_every_change_through_the_cookie_needs_the_csrf_token(site):
    client, token = site
    sign_in(client, token, "/evaluators")
    good = {"X-CSRF-Token": csrf_token(token)}
    made = client.post("/api/v1/evaluators", json={"name": "mine", **PRESET}, headers=good).json()["data"]
    task = client.post("/api/v1/tasks", headers=good, json={
        "name": "t", "evaluators": [{"evaluatorId": made["id"]}],
        "dataset": {"rows": [{"input": "q", "output": "a", "expected": "a"}]}}).json()["data"]
    changes = [
        ("POST", "/api/v1/datasets", {"json": {"name": "d"}}),
        ("POST", f"/api/v1/datasets/{task['datasetId']}/versions?filename=d.jsonl", {"content": b'{"id": "a"}\n'}),
        ("DELETE", f"/api/v1/datasets/{task['datasetId']}", {}),
        ("POST", "/api/v1/evaluators", {"json": {"name": "x", **PRESET}}),
        ("PUT", f"/api/v1/evaluators/{made['id']}", {"json": {"name": "x"}}),
        ("DELETE", f"/api/v1/evaluators/{made['id']}", {}),
        ("POST", f"/api/v1/evaluators/{made['id']}/test", {"json": {"input": "", "output": ""}}),
        ("POST", "/api/v1/tasks", {"json": {"name": "t", "evaluators": [{"evaluatorId": made["id"]}]}}),
        ("PUT", f"/api/v1/tasks/{task['id']}", {"json": {"name": "changed"}}),
        ("PUT", f"/api/v1/tasks/{task['id']}/dataset", {"files": {"file": ("d.jsonl", b'{"input": "q"}\n')}}),
        ("POST", f"/api/v1/tasks/{task['id']}/runs", {}),
        ("DELETE", f"/api/v1/tasks/{task['id']}", {}),
        ("POST", "/pages/api/evaluators/test", {"json": {"input": "", "output": "", **PRESET}}),
    ]
    for method, path, kwargs in changes:
        for headers in ({}, {"X-CSRF-Token": "forged"}, {**good, "Origin": "https://evil.example"}):
            refused = client.request(method, path, headers=headers, **kwargs)
            assert refused.status_code == 403, (method, path, headers, refused.text)
    assert client.get(f"/api/v1/evaluators/{made['id']}").json()["data"]["name"] == "mine"
    assert client.get(f"/api/v1/tasks/{task['id']}/runs").json()["data"] == []
    assert client.get(f"/api/v1/tasks/{task['id']}").json()["data"]["name"] == "t"
    assert [v["number"] for v in client.get(f"/api/v1/datasets/{task['datasetId']}").json()["data"]["versions"]] == [1]


def test_markup_in_names_and_paths_is_text_in_the_page(site):
    client, token = site
    sign_in(client, token, "/evaluators")
    made = client.post("/api/v1/evaluators", json={"name": XSS, "description": XSS, **PRESET},
                       headers={"X-CSRF-Token": csrf_token(token)})
    assert made.status_code == 200 and made.json()["data"]["name"] == XSS  # kept as given: it is text
    dataset = client.post("/api/v1/datasets", json={"name": XSS, "description": XSS, "rows": [{"id": XSS, "input": XSS}]},
                          headers={"X-CSRF-Token": csrf_token(token)})
    assert dataset.status_code == 200, dataset.text
    for path in (f"/evaluators/{made.json()['data']['id']}", "/evaluators", "/datasets",
                 f"/datasets/{dataset.json()['data']['id']}", "/datasets/%3Cimg%20src%3Dx%3E", "/tasks/new",
                 "/tasks/%3Cimg%20src%3Dx%3E/edit",
                 "/runs/%3Cimg%20src%3Dx%20onerror%3Dalert(1)%3E",
                 "/runs/abc/samples/%3Cscript%3Ealert(3)%3C%5Cscript%3E%3Cimg%20src%3Dx%3E"):
        page = client.get(path)
        assert page.status_code == 200, path
        assert "<img" not in page.text and "<script>alert" not in page.text, path
        assert page.text.count("<script") == 2  # the boot data and the page's module, nothing else
