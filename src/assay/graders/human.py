"""``human`` and ``human_calibration``: waza's manual-review graders.

Both report ``pending`` until a person reviews the sample. Reviews are recorded beside a
results file and applied afterwards by ``assay.runner.reviews.apply_reviews``, which turns
the pending result into ``passed`` / ``failed`` with the reviewer's score. For
``human_calibration`` it also compares the human label with the result of the grader named
in ``calibrate_grader`` on the same sample; ``calibration_summary`` aggregates that (with the
functions of ``assay.runner.calibration`` that ``assay calibrate`` uses too) into agreement,
Cohen's kappa, true-positive and true-negative rates, the best threshold and a status.
"""

from __future__ import annotations

from pydantic import Field

from assay.core.grader import Grader, GraderConfig, Taxonomy, Traits
from assay.core.registry import register
from assay.core.result import GraderResult
from assay.core.sample import Sample

_HUMAN_TAXONOMY = Taxonomy(determinism="stochastic", cost="high", portability="t1-universal",
                           reference="reference-free", temporal_scope="trajectory-level")


class HumanConfig(GraderConfig):
    instructions: str = Field(default="", description="What the reviewer should look for.")
    criteria: list[str] = Field(default_factory=list, description="Checklist shown to the reviewer.")


class HumanCalibrationConfig(HumanConfig):
    calibrate_grader: str = Field(min_length=1, description="Name of the grader whose results the human "
                                                            "labels calibrate (e.g. an llm judge).")


@register
class Human(Grader[HumanConfig]):
    type = "human"
    description = "Manual review: pending until a reviewer submits passed/failed and a score."
    kind = "human"
    taxonomy = _HUMAN_TAXONOMY
    traits = Traits(reviewable=True)

    def grade(self, sample: Sample) -> GraderResult:
        cfg = self.config
        reason = "awaiting human review" + (f": {cfg.instructions}" if cfg.instructions else "")
        return self.pending_result(reason, {"instructions": cfg.instructions, "criteria": list(cfg.criteria)})


@register
class HumanCalibration(Grader[HumanCalibrationConfig]):
    type = "human_calibration"
    description = "Human labels that calibrate another grader: pending until labelled, then agreement."
    kind = "human"
    traits = Traits(reviewable=True)
    taxonomy = _HUMAN_TAXONOMY.model_copy(update={"temporal_scope": "cross-trajectory"})

    def grade(self, sample: Sample) -> GraderResult:
        cfg = self.config
        reason = f"awaiting a human label to calibrate {cfg.calibrate_grader!r}"
        return self.pending_result(reason, {"calibrate_grader": cfg.calibrate_grader,
                                            "instructions": cfg.instructions, "criteria": list(cfg.criteria)})
