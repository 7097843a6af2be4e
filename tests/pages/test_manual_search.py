"""The manual at ``/docs/site`` in a real browser (issue 34): the site as ``make docs`` builds
it, served by a live ``assay serve``, read without signing in; its theme runs under the
manual's content-security policy, and its search finds Chinese words on the Chinese pages and
English words on the English ones."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from pages_support import policy_violations, serving, wait_until

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def manual(tmp_path_factory):
    folder = tmp_path_factory.mktemp("manual")
    site = folder / "site"
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(REPO / "mkdocs.yml"),
                           "-d", str(site)], env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    with serving(folder, ASSAY_MANUAL_DIR=str(site)) as live:
        yield live


def search(page, words: str) -> list[str]:
    """Type ``words`` into the site's search box; the links of the results it lists."""
    page.click("input.md-search__input")  # in the header at this width
    page.keyboard.type(words)
    page.keyboard.press("End")  # a key up: typed Chinese arrives as inserted text, and the search waits for keys
    wait_until(page, "document.querySelectorAll('.md-search-result__item').length > 0")
    return page.eval_on_selector_all(".md-search-result__item a", "links => links.map(a => a.href)")


def test_the_manual_reads_and_searches_in_chinese_and_english(browser, manual):
    context = browser.new_context(viewport={"width": 1280, "height": 900})  # not signed in
    try:
        page = context.new_page()
        refused = policy_violations(page)
        page.goto(manual.url + "/docs/site/zh/", wait_until="networkidle")
        assert "从哪里开始" in page.inner_text("article")
        links = search(page, "评估器")
        assert any("/docs/site/zh/reference/graders/" in link for link in links), links
        page.goto(manual.url + "/docs/site/reference/graders/", wait_until="networkidle")
        assert page.inner_text("h1").startswith("Graders")
        links = search(page, "similarity")
        assert any("/reference/graders/" in link for link in links), links
        assert refused == []
    finally:
        context.close()
