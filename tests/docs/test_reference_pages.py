"""The docs site's reference (docs/reference/ and docs/zh/reference/) is generated from the code,
never written by hand (issue 34, item 4): a fresh rendering must equal the committed pages, and a
stale page is named with the command that refreshes it."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from tools.docgen.markdown import REFRESH  # noqa: E402  the generator lives beside src/, not in it
from tools.docgen.pages import stale  # noqa: E402

FOLDERS = ("reference", "zh/reference")


@pytest.fixture(scope="module")
def rendered(tmp_path_factory) -> dict[Path, str]:
    """Every page as the generator renders it now, in a process of its own (it loads every
    grader of the registry and builds the service's app)."""
    out = tmp_path_factory.mktemp("reference")
    done = subprocess.run([sys.executable, "-m", "tools.docgen", "--out", str(out)], cwd=REPO,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return {path.relative_to(out): path.read_text(encoding="utf-8") for path in sorted(out.rglob("*.md"))}


def test_the_committed_reference_is_what_the_code_renders(rendered):
    assert {p.parts[0] if p.parts[0] != "zh" else "zh" for p in rendered} == {"reference", "zh"}
    assert len(rendered) == 10  # five pages, in English and Chinese
    problems = stale(rendered, REPO / "docs")
    assert not problems, "\n".join(problems)


def test_a_stale_or_stray_page_is_named_with_the_command(rendered, tmp_path):
    docs = tmp_path / "docs"
    for folder in FOLDERS:
        shutil.copytree(REPO / "docs" / folder, docs / folder)
    assert stale(rendered, docs) == []
    cli = docs / "reference/cli.md"
    cli.write_text(cli.read_text().replace("## assay run", "## assay walk"))
    (docs / "zh/reference/notes.md").write_text("# 手写的参考页\n")
    (docs / "zh/reference/graders.md").unlink()
    assert stale(rendered, docs) == [
        f"docs/reference/cli.md is stale: run {REFRESH}",
        f"docs/zh/reference/graders.md is missing: run {REFRESH}",
        "docs/zh/reference/notes.md is rendered by nothing: delete it or add its renderer",
    ]


def test_the_pages_hold_what_the_code_declares(rendered):
    """Spot checks that each page is rendered from its source, not a fixed text."""
    from assay.core.result import ErrorCode
    from assay.settings import declared

    cli, api = rendered[Path("reference/cli.md")], rendered[Path("reference/api.md")]
    for heading in ("## assay run", "## assay serve", "## assay tokens revoke", "## assay judge serve-local"):
        assert heading + "\n" in cli
    assert "`--fail-on-regression`" in cli and "`--database-url`" in cli
    assert "### POST /api/v1/evaluators/{evaluator_id}/test" in api and "### GET /health" in api
    settings = rendered[Path("reference/settings.md")]
    assert all(f"`{var.names[0]}`" in settings for _, var in declared())
    errors_zh = rendered[Path("zh/reference/errors.md")]
    assert all(f"`{code.value}`" in errors_zh for code in ErrorCode) and "| `timeout` | 超时 |" in errors_zh
    graders_zh = rendered[Path("zh/reference/graders.md")]
    assert "## similarity（相似度）" in graders_zh and "`threshold`（阈值）" in graders_zh
