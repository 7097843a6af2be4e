"""``llm_comparison``: an LLM judge scores the output against a reference (waza's
``llm_comparison``).

The reference is ``config.reference`` when set, else the sample's ``expected``; with neither
the result is an ``invalid_config`` error (the config cannot grade this sample). The rubric is
optional: by default the judge checks that the output conveys what the reference does. Scale,
threshold, parsing and the injection guard are those of ``llm``; the reference is fenced and
scanned like the output.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from assay.core.registry import register
from assay.core.result import ErrorCode, GraderResult
from assay.core.sample import Sample
from assay.graders._judging import JudgeGrader, Plan
from assay.graders.llm import RubricConfig, rubric_plan

DEFAULT_COMPARISON_RUBRIC = (
    "Compare the output with the reference answer. The output is good when it states the same facts and "
    "reaches the same conclusions as the reference, with nothing that contradicts it; wording, order and "
    "extra harmless detail do not matter. Missing key points or contradicting the reference lowers the score."
)


class LlmComparisonConfig(RubricConfig):
    """``llm_comparison``: the rubric defaults to ``DEFAULT_COMPARISON_RUBRIC``."""

    default_rubric = DEFAULT_COMPARISON_RUBRIC

    reference: Any = Field(default=None, description="The reference the output is compared with; default: the "
                                                     "sample's expected value.")


@register
class LlmComparison(JudgeGrader[LlmComparisonConfig]):
    type = "llm_comparison"
    description = "An LLM judge scores the output against a reference (config.reference or the sample's expected)."
    taxonomy = JudgeGrader.taxonomy.model_copy(update={"reference": "reference-based"})

    def plan(self, sample: Sample) -> GraderResult | Plan:
        reference = self.config.reference if self.config.reference is not None else sample.expected
        if reference is None:
            return self.error_result(ErrorCode.INVALID_CONFIG, "no reference to compare with: set config.reference "
                                                               "or give the sample an expected value")
        return rubric_plan(self, sample, reference)

    def cache_extra(self) -> Any:
        return self.config.criteria
