"""Fixtures of the browser tests: one live ``assay serve`` on 127.0.0.1 for the session (a
fresh SQLite database, user alice with a token), and headless Chromium driven by Playwright.

The browser is the system's (Debian's ``chromium``, which ``make test`` installs when it can;
``ASSAY_CHROMIUM`` names another): Playwright's own browser downloads do not work here. Tests
are skipped, saying why, only when no browser or no Playwright can be had. Each test saves
screenshots under ``out/screenshots/`` (``ASSAY_SCREENSHOTS`` names another folder) to look at.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "service"))
sys.path.insert(0, str(Path(__file__).parent))

from pages_support import ROOT, Live, find_browser, serving, signed_in_tab  # noqa: E402


@pytest.fixture(scope="session")
def live(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Live]:
    """``assay serve`` with alice (admin) and her token, stopped (by its pid) at the end."""
    with serving(tmp_path_factory.mktemp("pages")) as server:
        yield server


@pytest.fixture(scope="session")
def browser():
    path = find_browser()
    if path is None:
        pytest.skip("no Chromium to drive: install Debian's chromium (make test does, as root) or set ASSAY_CHROMIUM")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright is not installed (pip install -e '.[dev]')")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=path, headless=True,
                                             args=["--no-sandbox", "--disable-dev-shm-usage"])
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def shots() -> Path:
    folder = Path(os.environ.get("ASSAY_SCREENSHOTS") or ROOT / "out" / "screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture
def page(browser, live: Live):
    """A signed-in page of a fresh browser context speaking Chinese (Accept-Language: zh-CN)."""
    with signed_in_tab(browser, live, viewport={"width": 1280, "height": 900}) as tab:
        yield tab
