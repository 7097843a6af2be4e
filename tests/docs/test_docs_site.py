"""The docs site (issue 34, item 7): every English page has its Chinese twin with the same code
blocks, byte for byte and in order; every page is in the navigation; the site builds with every
link and anchor checked (``mkdocs build --strict``), and a broken link fails that build; the
README stays a few screens."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
DOCS = REPO / "docs"
README_MAX_LINES = 200
# a fenced block: its opening fence (``` or ~~~, three or more, maybe indented) to the same fence
FENCE = re.compile(r"^([ \t]*)(`{3,}|~{3,})[^\n]*\n.*?^\1\2[ \t]*$", re.MULTILINE | re.DOTALL)


def english_pages() -> list[Path]:
    return sorted(p.relative_to(DOCS) for p in DOCS.rglob("*.md") if p.relative_to(DOCS).parts[0] != "zh")


def twins() -> list[tuple[Path, Path]]:
    pairs = [(REPO / "README.md", REPO / "README.zh.md")]
    return pairs + [(DOCS / page, DOCS / "zh" / page) for page in english_pages()]


def code_blocks(path: Path) -> list[str]:
    return [match.group(0) for match in FENCE.finditer(path.read_text(encoding="utf-8"))]


def nav_pages(nav: object) -> list[str]:
    if isinstance(nav, str):
        return [nav]
    if isinstance(nav, list):
        return [page for item in nav for page in nav_pages(item)]
    if isinstance(nav, dict):
        return [page for value in nav.values() for page in nav_pages(value)]
    return []


def build(config: Path, site: Path) -> subprocess.CompletedProcess[str]:
    """``mkdocs build --strict`` (never with ``--quiet``, under which warnings are not counted)."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    return subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config),
                           "-d", str(site)], env=env, capture_output=True, text=True, timeout=300)


@pytest.mark.parametrize(("english", "chinese"), twins(), ids=lambda p: str(p.relative_to(REPO)))
def test_every_page_has_its_chinese_twin_with_the_same_code(english, chinese):
    assert chinese.is_file(), f"{english.relative_to(REPO)} has no Chinese twin {chinese.relative_to(REPO)}"
    ours, theirs = code_blocks(english), code_blocks(chinese)
    assert len(ours) == len(theirs), f"{len(ours)} code blocks in English, {len(theirs)} in Chinese"
    for index, (a, b) in enumerate(zip(ours, theirs, strict=True)):
        assert a == b, f"code block {index + 1} of {chinese.relative_to(REPO)} differs from the English one"


def test_no_chinese_page_without_an_english_one():
    english = set(english_pages())
    orphans = [p for p in sorted((DOCS / "zh").rglob("*.md")) if p.relative_to(DOCS / "zh") not in english]
    assert not orphans


def test_the_code_blocks_are_found():
    """The fence pattern finds what Markdown calls a block (a check of the check)."""
    text = "a\n```sh\nassay run x\n```\n\n  ~~~~python\n  print(1)\n  ~~~~\n```\nunclosed"
    sample = DOCS.parent / "README.md"
    assert len(FENCE.findall(text)) == 2 and code_blocks(sample)


def test_every_page_is_in_the_navigation():
    config = yaml.safe_load((REPO / "mkdocs.yml").read_text(encoding="utf-8"))
    listed = nav_pages(config["nav"])
    assert len(listed) == len(set(listed)), "a page is in the navigation twice"
    pages = {str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md")}
    assert pages - set(listed) == set(), "pages no one can reach from the navigation"
    assert set(listed) - pages == set(), "navigation entries without a page"


def test_the_site_builds_strictly(tmp_path):
    done = build(REPO / "mkdocs.yml", tmp_path / "site")
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "site/index.html").is_file() and (tmp_path / "site/zh/reference/graders/index.html").is_file()
    index = json.loads((tmp_path / "site/search/search_index.json").read_text(encoding="utf-8"))
    words = {word for doc in index["docs"] if doc["location"].startswith("zh/") for word in doc["text"].split("\u200b")}
    assert {"评估器", "数据", "评测"} <= words  # Chinese words are in the search index, segmented (jieba)


def test_a_broken_link_or_anchor_fails_the_build(tmp_path):
    copy = tmp_path / "repo"
    shutil.copytree(DOCS, copy / "docs")
    shutil.copy(REPO / "mkdocs.yml", copy / "mkdocs.yml")
    page = copy / "docs/index.md"
    page.write_text(page.read_text(encoding="utf-8") + "\n[gone](guides/no-such-guide.md)\n", encoding="utf-8")
    done = build(copy / "mkdocs.yml", tmp_path / "site")
    assert done.returncode != 0 and "no-such-guide.md" in done.stdout + done.stderr
    page.write_text(page.read_text(encoding="utf-8").replace("guides/no-such-guide.md", "performance.md#no-such-part"))
    done = build(copy / "mkdocs.yml", tmp_path / "site")
    assert done.returncode != 0 and "no-such-part" in done.stdout + done.stderr


def test_the_readme_is_a_few_screens():
    for readme in ("README.md", "README.zh.md"):
        lines = (REPO / readme).read_text(encoding="utf-8").count("\n")
        assert lines <= README_MAX_LINES, f"{readme}: {lines} lines; the rest belongs in docs/"
