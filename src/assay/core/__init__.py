"""The pure core: samples, results, specs, the registry and aggregation. No I/O."""

from assay.core.aggregate import SampleVerdict, SuiteSummary, judge_sample, summarize, weighted_score
from assay.core.errors import AssayError, SpecError
from assay.core.grader import BatchGrader, Grader, GraderConfig, Taxonomy
from assay.core.interfaces import CodeCall, CodeOutcome, CodeRunner, Resources
from assay.core.registry import GraderPluginWarning, PluginProblem, register
from assay.core.result import ErrorCode, GraderResult, Status
from assay.core.sample import Event, Sample
from assay.core.spec import CompiledSpec, GraderSpec, compile_spec

__all__ = [
    "AssayError", "BatchGrader", "CodeCall", "CodeOutcome", "CodeRunner", "CompiledSpec", "ErrorCode", "Event",
    "Grader", "GraderConfig", "GraderPluginWarning", "GraderResult", "GraderSpec", "PluginProblem", "Resources",
    "Sample", "SampleVerdict", "SpecError", "Status", "SuiteSummary", "Taxonomy", "compile_spec",
    "judge_sample", "register", "summarize", "weighted_score",
]
