"""The pure core: samples, results, specs, the registry and aggregation. No I/O.

The names below load on first use, so importing one core module (``assay.core.errors``) does
not import them all.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

_WHERE = {
    "assay.core.aggregate": ("SampleVerdict", "SuiteSummary", "judge_sample", "summarize", "weighted_score"),
    "assay.core.errors": ("AssayError", "SpecError"),
    "assay.core.grader": ("BatchGrader", "Grader", "GraderConfig", "Taxonomy"),
    "assay.core.interfaces": ("CodeCall", "CodeOutcome", "CodeRunner", "Resources"),
    "assay.core.registry": ("GraderPluginWarning", "PluginProblem", "register"),
    "assay.core.result": ("ErrorCode", "GraderResult", "Status"),
    "assay.core.sample": ("Event", "Sample"),
    "assay.core.spec": ("CompiledSpec", "GraderSpec", "compile_spec"),
}
_LAZY = {name: module for module, names in _WHERE.items() for name in names}

__all__ = [
    "AssayError", "BatchGrader", "CodeCall", "CodeOutcome", "CodeRunner", "CompiledSpec", "ErrorCode", "Event",
    "Grader", "GraderConfig", "GraderPluginWarning", "GraderResult", "GraderSpec", "PluginProblem", "Resources",
    "Sample", "SampleVerdict", "SpecError", "Status", "SuiteSummary", "Taxonomy", "compile_spec",
    "judge_sample", "register", "summarize", "weighted_score",
]

if TYPE_CHECKING:
    from assay.core.aggregate import SampleVerdict, SuiteSummary, judge_sample, summarize, weighted_score
    from assay.core.errors import AssayError, SpecError
    from assay.core.grader import BatchGrader, Grader, GraderConfig, Taxonomy
    from assay.core.interfaces import CodeCall, CodeOutcome, CodeRunner, Resources
    from assay.core.registry import GraderPluginWarning, PluginProblem, register
    from assay.core.result import ErrorCode, GraderResult, Status
    from assay.core.sample import Event, Sample
    from assay.core.spec import CompiledSpec, GraderSpec, compile_spec


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'assay.core' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
