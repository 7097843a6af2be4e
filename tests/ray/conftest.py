"""Fixtures of the Ray tests."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from ray_cluster import local_ray  # noqa: E402


@pytest.fixture(scope="session")
def ray_env() -> Iterator[dict[str, str]]:
    """The variables that put an ``assay run --engine ray`` on one local Ray kept for the
    session (``tests/ray/ray_cluster.py``), instead of a Ray started and stopped by each run.
    test_ray_waza's run still starts its own, so that path stays tested."""
    pytest.importorskip("ray")
    with local_ray() as env:
        yield env
