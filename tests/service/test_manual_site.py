"""The manual at ``/docs/site`` of a live ``assay serve`` (issue 34, item 3): readable without a
token, the page that says how to build it while nothing is built, the site once it is (no
restart), its own content-security policy, and no way out of its folder."""

from __future__ import annotations

import os

import httpx2 as httpx
import pytest
from live_serve import Serve, read_answer

from assay.server.docs_site import MANUAL_CSP

SECRET = "the secret next to the manual"


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("manual")
    site = tmp / "site"
    site.mkdir()
    (tmp / "secret.txt").write_text(SECRET)
    env = {**os.environ, "ASSAY_DATABASE_URL": f"sqlite:///{tmp / 'assay.db'}", "ASSAY_JUDGE_CACHE": "off",
           "ASSAY_MANUAL_DIR": str(site)}
    server = Serve(env, tmp / "server.log").start()
    try:
        yield server, site
    finally:
        server.stop()


def build(site) -> None:
    """A small site laid out as mkdocs lays one out (a folder with index.html per page)."""
    (site / "guides/ray").mkdir(parents=True)
    (site / "guides/ray/index.html").write_text("<h1>Scale out with Ray</h1>")
    (site / "zh").mkdir()
    (site / "zh/index.html").write_text("<h1>评估器</h1>", encoding="utf-8")
    (site / "index.html").write_text("<h1>assay manual</h1>")
    os.symlink(site.parent / "secret.txt", site / "link.txt")


def raw_get(server: Serve, target: str) -> tuple[int, dict[str, str], bytes]:
    """GET ``target`` exactly as written (an HTTP client would normalise the dots away)."""
    with server.connect() as sock:
        sock.sendall(f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
        return read_answer(sock)


def test_the_manual_without_a_token_before_and_after_it_is_built(live):
    server, site = live
    before = httpx.get(server.url + "/docs/site/guides/ray/", timeout=10)
    assert before.status_code == 404
    assert "make docs" in before.text and str(site) in before.text  # says how, and where it is served from
    assert before.headers["content-type"].startswith("text/html")

    build(site)  # no restart: the next request finds it
    home = httpx.get(server.url + "/docs/site", timeout=10, follow_redirects=False)
    assert home.status_code in (307, 308) and home.headers["location"].endswith("/docs/site/")
    page = httpx.get(server.url + "/docs/site/", timeout=10)
    assert page.status_code == 200 and "assay manual" in page.text
    assert page.headers["content-security-policy"] == MANUAL_CSP
    assert "评估器" in httpx.get(server.url + "/docs/site/zh/", timeout=10).text
    assert "Scale out with Ray" in httpx.get(server.url + "/docs/site/guides/ray/", timeout=10).text
    assert httpx.get(server.url + "/docs/site/guides/nothing/", timeout=10).status_code == 404

    # the API still wants a token, and the OpenAPI pages are where they were
    assert httpx.get(server.url + "/api/v1/evaluators", timeout=10).status_code == 401
    docs = httpx.get(server.url + "/docs", timeout=10)
    assert docs.status_code == 200 and "swagger" in docs.text.lower()


@pytest.mark.parametrize("target", [
    "/docs/site/../secret.txt",
    "/docs/site/%2e%2e/secret.txt",
    "/docs/site/..%2fsecret.txt",
    "/docs/site/%2e%2e%2fsecret.txt",
    "/docs/site/guides/../../secret.txt",
    "/docs/site/link.txt",  # a symbolic link out of the folder
    "/docs/site//etc/passwd",
    "/docs/site/%2fetc%2fpasswd",
])
def test_no_path_leaves_the_manual_folder(live, target):
    server, site = live
    if not (site / "index.html").exists():
        build(site)
    status, _, body = raw_get(server, target)
    assert SECRET.encode() not in body and b"root:" not in body
    assert status in (400, 404), (status, body[:200])
