"""The pure core: samples, results, specs, the registry and aggregation. No I/O.

The names below load on first use, so importing one core module (``assay.core.errors``) does
not import them all.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from assay.core.lazy import lazy_names

_WHERE = {
    "assay.core.aggregate": ("SampleVerdict", "SuiteSummary", "judge_sample", "summarize", "weighted_score"),
    "assay.core.summary": ("Outcomes", "RunningSummary"),
    "assay.core.errors": ("AssayError", "SpecError"),
    "assay.core.grader": ("BatchGrader", "Grader", "GraderConfig", "Taxonomy", "Traits"),
    "assay.core.interfaces": ("CodeCall", "CodeOutcome", "CodeRunner", "Resources"),
    "assay.core.registry": ("GraderPluginWarning", "PluginProblem", "register"),
    "assay.core.result": ("ErrorCode", "GraderResult", "Status"),
    "assay.core.sample": ("Event", "Sample"),
    "assay.core.spec": ("CompiledSpec", "GraderSpec", "compile_spec"),
}
_LAZY = {name: module for module, names in _WHERE.items() for name in names}

__all__ = [
    "AssayError", "BatchGrader", "CodeCall", "CodeOutcome", "CodeRunner", "CompiledSpec", "ErrorCode", "Event",
    "Grader", "GraderConfig", "GraderPluginWarning", "GraderResult", "GraderSpec", "Outcomes", "PluginProblem",
    "Resources", "RunningSummary", "Sample", "SampleVerdict", "SpecError", "Status", "SuiteSummary", "Taxonomy",
    "Traits", "compile_spec", "judge_sample", "register", "summarize", "weighted_score",
]

if TYPE_CHECKING:
    from assay.core.aggregate import SampleVerdict, SuiteSummary, judge_sample, summarize, weighted_score
    from assay.core.errors import AssayError, SpecError
    from assay.core.grader import BatchGrader, Grader, GraderConfig, Taxonomy, Traits
    from assay.core.interfaces import CodeCall, CodeOutcome, CodeRunner, Resources
    from assay.core.registry import GraderPluginWarning, PluginProblem, register
    from assay.core.result import ErrorCode, GraderResult, Status
    from assay.core.sample import Event, Sample
    from assay.core.spec import CompiledSpec, GraderSpec, compile_spec
    from assay.core.summary import Outcomes, RunningSummary


__getattr__, __dir__ = lazy_names(globals(), _LAZY)
