"""``python -m tools.docgen [--write | --out DIR]``: render the reference pages.

Without options it checks: exit 1, naming each stale page, when a committed page differs from a
fresh rendering. ``--write`` rewrites docs/reference/ and docs/zh/reference/; ``--out DIR``
writes the pages under DIR (as DIR/reference/ and DIR/zh/reference/) and leaves docs/ alone."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tools.docgen.pages import DOCS, render_all, stale

parser = argparse.ArgumentParser(prog="python -m tools.docgen", description=__doc__)
parser.add_argument("--write", action="store_true", help="rewrite the committed pages under docs/")
parser.add_argument("--out", type=Path, help="write the pages under this folder instead")
options = parser.parse_args()
pages = render_all()
if options.write or options.out:
    root = options.out or DOCS
    for relative, text in pages.items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    print(f"wrote {len(pages)} pages under {root}")
    sys.exit(0)
problems = stale(pages)
for problem in problems:
    print(problem, file=sys.stderr)
sys.exit(1 if problems else 0)
