"""Helpers of the page tests, importable by name (``pages_support``) from test modules: the
browser to drive, a seeded database, the live server's address and token, signing in."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx2 as httpx
import pytest

ROOT = Path(__file__).resolve().parents[2]
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
AXE = ROOT / "web" / "node_modules" / "axe-core" / "axe.min.js"


def find_browser() -> str | None:
    named = os.environ.get("ASSAY_CHROMIUM")
    if named:
        return named if os.access(named, os.X_OK) else None
    return next((path for name in BROWSERS if (path := shutil.which(name))), None)


def seed(database_url: str) -> str:
    """Alice (an admin) and her token, as ``assay users create`` and ``assay tokens create`` make them."""
    from assay.store import Database, upgrade
    from assay.store.users import create_token, create_user

    database = Database(database_url)
    try:
        upgrade(database)
        with database.session() as session:
            create_user(session, "alice", is_admin=True)
            return create_token(session, "alice").secret
    finally:
        database.dispose()


@dataclass
class Live:
    url: str
    token: str

    def api(self) -> httpx.Client:
        return httpx.Client(base_url=self.url + "/api/v1", headers={"Authorization": f"Bearer {self.token}"},
                            timeout=30)


def sign_in(page, live: Live, token: str | None = None) -> None:
    page.goto(live.url + "/signin")
    page.fill("#token", token or live.token)
    page.click("button[type=submit]")


@contextmanager
def signed_in_tab(browser, live: Live, **context_options) -> Iterator:
    """A tab of a fresh Chinese-speaking browser context, signed in as alice (on /evaluators);
    ``context_options`` go to ``new_context`` (a viewport, say). The context closes after."""
    context = browser.new_context(locale="zh-CN", **context_options)
    context.set_default_timeout(20_000)
    tab = context.new_page()
    try:
        sign_in(tab, live)
        tab.wait_for_url("**/evaluators")
        yield tab
    finally:
        context.close()


@contextmanager
def serving(folder: Path, **env: str) -> Iterator[Live]:
    """``assay serve`` on a fresh SQLite database in ``folder`` (``env`` added to its
    environment), with alice (admin) and her token; stopped (by its pid) at the end."""
    from pg_server import free_port

    env = {**os.environ, "ASSAY_DATABASE_URL": f"sqlite:///{folder / 'assay.db'}", "ASSAY_JUDGE_CACHE": "off", **env}
    token = seed(env["ASSAY_DATABASE_URL"])
    port = free_port()
    log = folder / "server.log"
    with open(log, "wb") as out:
        process = subprocess.Popen([sys.executable, "-m", "assay.cli.main", "serve", "--host", "127.0.0.1", "--port",
                                    str(port), "--log-level", "warning"], env=env, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, f"assay serve exited: {log.read_text()[-3000:]}"
            assert time.monotonic() < deadline, f"assay serve did not answer: {log.read_text()[-3000:]}"
            try:
                if httpx.get(url + "/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                time.sleep(0.1)
        yield Live(url, token)
    finally:
        stop(process)


def stop(process: subprocess.Popen) -> None:
    """End a server the test started: terminate, then kill if it does not exit in 30 s."""
    process.terminate()
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(timeout=10)


def task_on_dataset(api: httpx.Client, name: str, evaluators: list[dict], rows: list[dict],
                    dataset_name: str | None = None) -> dict:
    """A task grading a new dataset of ``rows``, made through ``/datasets`` as the pages make one."""
    dataset = api.post("/datasets", json={"name": dataset_name or name, "rows": rows})
    assert dataset.status_code == 200, dataset.text
    made = api.post("/tasks", json={"name": name, "evaluators": evaluators, "datasetId": dataset.json()["data"]["id"]})
    assert made.status_code == 200, made.text
    return made.json()["data"]


def wait_until(page, expression: str, timeout_s: float = 20) -> None:
    """Poll ``expression`` in ``page`` until it is true. Not Playwright's ``wait_for_function``:
    that evaluates with ``eval`` inside the page, which the pages' content-security policy
    refuses; ``page.evaluate`` goes over the DevTools protocol."""
    deadline = time.monotonic() + timeout_s
    while not page.evaluate(expression):
        if time.monotonic() > deadline:
            raise AssertionError(f"not true within {timeout_s:g} s: {expression}")
        time.sleep(0.02)


def policy_violations(page) -> list[str]:
    """Start collecting what the page's content-security policy refuses; returns the list,
    which fills as the page runs (console messages say each refusal)."""
    refused: list[str] = []
    page.on("console", lambda message: refused.append(message.text)
            if "Content Security Policy" in message.text else None)
    return refused


def serious_violations(page) -> list[str]:
    """axe-core's serious and critical violations on ``page`` as it is now (skips the test
    when web/'s npm modules, axe-core among them, are not installed)."""
    if not AXE.exists():
        pytest.skip("axe-core is not installed: make web (npm install in web/)")
    # Evaluated over the DevTools protocol, as a script tag could not be: the pages' policy runs no
    # inline script (and no eval), which is what the pages are checked for (test_every_page).
    page.evaluate(AXE.read_text(encoding="utf-8"))
    found = page.evaluate("axe.run(document, {resultTypes: ['violations']}).then(r => r.violations"
                          ".filter(v => v.impact === 'serious' || v.impact === 'critical')"
                          ".map(v => v.id + ': ' + v.nodes.slice(0, 3).map(n => n.target.join(' ')).join(' | ')))")
    return list(found)
