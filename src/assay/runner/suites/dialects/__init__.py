"""One module per suite dialect, each read the way its peer reads it (names, defaults, score
rules, what an unknown key means) and mapped onto assay's graders in that one module.

A dialect module has ``NAME`` (its ``--dialect`` value), ``detect(data) -> bool`` (is this
top-level mapping mine?), ``load(doc, *, results, context) -> Suite`` and typed file models
(``FileModel`` subclasses, see ``runner/suites/filemodel.py``). To add one, write the module
beside these and list it in ``MODULES`` and ``DETECT`` below.

Detection lives here, in plain functions, so that a suite's dialect is known without importing
(and building the file models of) the dialects it is not written in.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any


def detect_vally(data: Mapping[str, Any]) -> bool:
    """A Vally eval spec: a ``stimuli`` list."""
    return isinstance(data.get("stimuli"), list)


def detect_waza(data: Mapping[str, Any]) -> bool:
    """A waza suite: a ``tasks`` list of globs (strings or ``{include: ...}``) or a
    ``tasks_from`` CSV, and no ``stimuli``."""
    if "stimuli" in data:
        return False
    if isinstance(data.get("tasks_from"), str) and "tasks" not in data:
        return True
    if not isinstance(data.get("tasks"), list):
        return False
    return all(isinstance(t, str) or (isinstance(t, Mapping) and "include" in t) for t in data["tasks"])


def detect_assay(data: Mapping[str, Any]) -> bool:
    """Every mapping: assay's own format reads what no peer dialect claims (it is asked last)."""
    return True


MODULES: dict[str, str] = {
    "vally": "assay.runner.suites.dialects.vally",
    "waza": "assay.runner.suites.dialects.waza",
    "assay": "assay.runner.suites.dialects.assay",
}
"""Every dialect by name and the module that reads it, in detection order."""

DETECT: dict[str, Callable[[Mapping[str, Any]], bool]] = {
    "vally": detect_vally, "waza": detect_waza, "assay": detect_assay}
