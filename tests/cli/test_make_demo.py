"""`make demo`, the first command a newcomer types, grades a suite in each dialect (assay's own,
a waza suite and a Vally suite, each with its results file) through the installed command, and
every one of them loads and grades (exit 0 or 1: the examples fail some samples on purpose)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
VENV = Path(sys.executable).parent.parent


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_demo_grades_all_three_dialects() -> None:
    env = {**os.environ, "COLUMNS": "200"}
    done = subprocess.run(["make", "-s", "demo", f"VENV={VENV}"], cwd=REPO, capture_output=True, text=True,
                          timeout=300, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    headers = re.findall(r"\((assay|waza|vally), (\d+) samples\)", done.stdout)
    assert {d for d, _ in headers} == {"assay", "waza", "vally"}, done.stdout
    assert all(int(n) > 0 for _, n in headers)
    closing = re.findall(r"^(\d+)/(\d+) passed", done.stdout, re.M)
    assert len(closing) == len(headers) == 4 and all(int(total) > 0 for _, total in closing)
    assert "Traceback" not in done.stderr and "error:" not in done.stderr
