"""The settings reference (docs/reference/settings.md and its Chinese twin) is what the
declarations in ``assay.settings`` render: one fact, never written by hand.

After changing a setting, ``.venv/bin/python tests/test_settings_docs.py --write`` (or
``python -m tools.docgen --write``, which rewrites every reference page) refreshes it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from assay.settings import SECTIONS, declared  # noqa: E402
from tools.docgen import settings_ref  # noqa: E402  the generator lives beside src/, not in it
from tools.docgen.pages import place  # noqa: E402


def test_the_settings_reference_is_the_declarations():
    for lang in ("en", "zh"):
        page = REPO / "docs" / place(lang, "settings")
        assert page.read_text(encoding="utf-8") == settings_ref.render(lang), (
            f"{page.relative_to(REPO)} is stale: run python -m tools.docgen --write")


def test_every_setting_is_in_the_reference_once():
    text = (REPO / "docs" / place("en", "settings")).read_text(encoding="utf-8")
    for _, var in declared():
        assert text.count(f"| `{var.names[0]}`") == 1, var.names[0]
    assert {var.section for _, var in declared()} == set(SECTIONS)


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    sys.exit(subprocess.call([sys.executable, "-m", "tools.docgen", "--write"], cwd=REPO))
