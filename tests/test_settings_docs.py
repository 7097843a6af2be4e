"""README's settings tables are what the declarations in ``assay.settings`` render: one fact.

Each table sits between ``<!-- settings: SECTION -->`` and ``<!-- /settings -->``; after changing a
setting, ``.venv/bin/python tests/test_settings_docs.py --write`` rewrites them."""

from __future__ import annotations

import re
import sys
from pathlib import Path

from assay.settings import SECTIONS, markdown_table

README = Path(__file__).resolve().parents[1] / "README.md"
BLOCK = re.compile(r"(<!-- settings: (\w+) -->\n)(.*?)(<!-- /settings -->)", re.S)


def rendered(text: str) -> str:
    return BLOCK.sub(lambda m: m[1] + markdown_table(m[2]) + m[4], text)


def test_readme_tables_are_the_declarations():
    text = README.read_text()
    assert sorted(m[2] for m in BLOCK.finditer(text)) == sorted(SECTIONS)  # every section once
    assert text == rendered(text), "README's settings tables differ: run python tests/test_settings_docs.py --write"


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    README.write_text(rendered(README.read_text()))
