"""The reference pages: which module renders each, where each is written, and the staleness check."""

from __future__ import annotations

from pathlib import Path

from tools.docgen import api_ref, cli_ref, errors_ref, graders_ref, settings_ref
from tools.docgen.markdown import LANGS, REFRESH

DOCS = Path(__file__).resolve().parents[2] / "docs"
RENDERERS = {"cli": cli_ref.render, "settings": settings_ref.render, "graders": graders_ref.render,
             "errors": errors_ref.render}


def place(lang: str, name: str) -> Path:
    """A page's path under docs/: ``reference/cli.md``, ``zh/reference/cli.md``."""
    return Path("reference" if lang == "en" else f"{lang}/reference") / f"{name}.md"


def render_all() -> dict[Path, str]:
    """Every reference page in every language, by its path under docs/."""
    pages: dict[Path, str] = {}
    document = api_ref.openapi()
    for lang in LANGS:
        for name, render in RENDERERS.items():
            pages[place(lang, name)] = render(lang)
        pages[place(lang, "api")] = api_ref.render(lang, document)
    return dict(sorted(pages.items()))


def stale(pages: dict[Path, str], docs: Path = DOCS) -> list[str]:
    """What differs between ``pages`` and the committed ones, one line each, with the command
    that refreshes them; also a page under a reference folder that nothing renders."""
    problems = []
    for relative, text in pages.items():
        committed = docs / relative
        if not committed.is_file():
            problems.append(f"docs/{relative} is missing: run {REFRESH}")
        elif committed.read_text(encoding="utf-8") != text:
            problems.append(f"docs/{relative} is stale: run {REFRESH}")
    for folder in {docs / relative.parent for relative in pages}:
        for extra in sorted(folder.glob("*.md")):
            if extra.relative_to(docs) not in pages:
                problems.append(f"docs/{extra.relative_to(docs)} is rendered by nothing: delete it or add its renderer")
    return problems
