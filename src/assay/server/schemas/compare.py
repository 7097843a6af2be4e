"""``GET /runs/{a}/compare/{b}``: ``assay compare --json``'s fields, in camelCase."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from assay.server.schemas.common import ApiModel


class FlipOut(ApiModel):
    """A sample whose outcome changed, with the reason each run gave (null: it passed). A
    reason the product wrote carries its message's code and values beside it (as a result's
    ``reasonCode`` and ``reasonArgs``); null for what user code or a judge wrote."""

    id: str
    direction: Literal["to_fail", "to_pass"]
    base_reason: str | None
    new_reason: str | None
    base_reason_code: str | None = None
    base_reason_args: dict[str, Any] | None = None
    new_reason_code: str | None = None
    new_reason_args: dict[str, Any] | None = None


class GraderComparisonOut(ApiModel):
    """One evaluator (or ``overall``: the samples' verdicts) compared over the paired samples."""

    grader: str = Field(description="The evaluator's name, or `overall`.")
    evaluator_id: str | None = None
    base_pass_rate: float | None
    new_pass_rate: float | None
    delta: float | None = Field(description="New pass rate minus base pass rate.")
    delta_ci: list[float] | None = Field(description="95% paired interval of the delta.")
    p_value: float | None = Field(description="Exact McNemar p-value on the samples that changed.")
    to_fail: list[str]
    to_pass: list[str]
    pairs: int
    left_out: int = Field(description="Paired samples without a decided result in one run or both.")
    base_mean_score: float | None
    new_mean_score: float | None
    score_delta: float | None
    score_delta_ci: list[float] | None = Field(
        description="95% interval of the mean paired difference (Wilson-type, within [-1, 1]).")
    flips: list[FlipOut]


class UnpairedOut(ApiModel):
    base_only: list[str]
    new_only: list[str]


class ComparisonOut(ApiModel):
    """Run ``b`` against run ``a``, paired by sample id; samples in one run only are apart."""

    graders: list[GraderComparisonOut]
    overall: GraderComparisonOut
    unpaired: UnpairedOut
