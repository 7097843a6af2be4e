"""Suite file formats other than assay's own. Each module offers
``detect(path, data) -> bool`` and ``load(path, data) -> LoadedSuite``; ``path`` is the
suite file (or its directory) and ``data`` its parsed YAML, with ``data["results"]``
optionally naming the results file to grade (the CLI's ``--results``)."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType
from typing import Any

from assay.runner.formats import vally, waza

FORMATS: tuple[ModuleType, ...] = (vally, waza)


def detect_format(path: Path, data: Any) -> ModuleType | None:
    """The format module that reads ``data``, or None (assay's own format, or unknown)."""
    return next((fmt for fmt in FORMATS if fmt.detect(path, data)), None)


__all__ = ["FORMATS", "detect_format", "vally", "waza"]
