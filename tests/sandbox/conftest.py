"""Fixtures of the sandbox tests."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from python_helpers import SECRET, SECRET_ENV  # noqa: E402

from assay.sandbox.python import PythonPool  # noqa: E402


@pytest.fixture(scope="module")
def pool():
    """A started two-zygote Python pool per test module; the host holds a secret no evaluation may see."""
    os.environ[SECRET_ENV] = SECRET
    with PythonPool(size=2) as p:
        p.start()
        yield p
