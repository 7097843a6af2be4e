"""Suites written into a test's folder and loaded as ``assay run`` loads them (shared by the
dialect tests)."""

from __future__ import annotations

from pathlib import Path

from assay.core.context import SpecContext
from assay.runner.suites import Suite, load_suite


def write(tmp: Path, files: dict[str, str]) -> Path:
    """Each file of ``files`` (relative path -> text) under ``tmp``; the path of its eval.yaml."""
    for name, text in files.items():
        (tmp / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp / name).write_text(text)
    return tmp / "eval.yaml"


def load(path: Path, version: str | None = None) -> Suite:
    """The suite at ``path``, read as waza ``version`` when given."""
    return load_suite(path, context=SpecContext(), waza_version=version)
