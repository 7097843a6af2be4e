"""``vally_metric``: Vally's metric thresholds (``token-budget``, ``tool-call-count``,
``turn-count``, ``error-count``, ``wall-time``;
microsoft.github.io/vally/reference/graders/metric-thresholds/).

The run's value must not exceed ``max``. Within budget the score is 1 and the grader passes;
over it the grader fails and the score falls off linearly, ``max(0, 1 - (value - max) /
max(max, 1))``: 0.5 at 1.5 × max, 0 from 2 × max (with ``max: 0`` any value above 0 scores 0).

Values: ``token-budget`` sums input and output tokens over the transcript's usage events (without
any, the ``totalTokens`` / ``tokens`` the run reports);
``tool-call-count`` counts tool calls; ``turn-count`` the turns the run reports (``turns`` /
``turnCount`` in its outcome or metadata), else its assistant messages; ``error-count`` its error
events; ``wall-time`` the run's duration (``duration_ms``), against ``max`` given as a duration
(``30s``, ``2m``, ``1h``; a bare number is milliseconds) and compared in milliseconds.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator, model_validator

from assay.core.grader import Grader, GraderConfig, Taxonomy, Traits
from assay.core.registry import register
from assay.core.result import ErrorCode, GraderResult
from assay.core.sample import Sample
from assay.graders._process import format_duration, parse_duration
from assay.graders.vally_session import reported, reported_turns

Metric = Literal["token-budget", "tool-call-count", "turn-count", "error-count", "wall-time"]
_ZERO = re.compile(r"\s*0+(?:\.0+)?\s*(?:ms|s|m|h)?\s*")
_TOKEN_KEYS = ("totalTokens", "total_tokens", "tokens")
_UNIT = {"token-budget": "tokens", "tool-call-count": "tool calls", "turn-count": "turns",
         "error-count": "errors", "wall-time": "ms"}


def fall_off(value: float, maximum: float) -> float:
    """Vally's metric score: 1 within budget, then linear down to 0 at twice the budget."""
    if value <= maximum:
        return 1.0
    return max(0.0, 1.0 - (value - maximum) / max(maximum, 1.0))


class VallyMetricConfig(GraderConfig):
    metric: Metric = Field(description="Which metric: token-budget, tool-call-count, turn-count, "
                                       "error-count or wall-time.")
    max: int | float | str = Field(description="Upper bound: a non-negative integer; for wall-time a "
                                               "duration such as 30s or 2m (a number: milliseconds).")

    @field_validator("max")
    @classmethod
    def _finite(cls, value: int | float | str) -> int | float | str:
        if isinstance(value, bool):
            raise ValueError("max must be a number or a duration")
        if isinstance(value, (int, float)) and not (0 <= value < float("inf")):
            raise ValueError("max must be a finite non-negative value")
        return value

    @model_validator(mode="after")
    def _shape(self) -> VallyMetricConfig:
        if self.metric != "wall-time" and not isinstance(self.max, int):
            raise ValueError(f"{self.metric} needs max as a non-negative integer")
        self.limit  # noqa: B018 - validates a wall-time duration now
        return self

    @property
    def limit(self) -> float:
        """The bound in the metric's unit (milliseconds for wall-time). Raises ValueError."""
        if not isinstance(self.max, str):
            return float(self.max)
        if _ZERO.fullmatch(self.max):
            return 0.0
        return parse_duration(self.max, maximum=float("inf")) * 1000


@register
class VallyMetric(Grader[VallyMetricConfig]):
    type = "vally_metric"
    description = "Vally's metric thresholds: a run metric at most max, score falling off linearly past it."
    traits = Traits()
    taxonomy = Taxonomy(determinism="static", cost="free", reference="reference-free",
                        temporal_scope="trajectory-level", portability="t1-universal")

    def _value(self, sample: Sample) -> float | None:
        metric = self.config.metric
        if metric == "token-budget":
            usage = [e for e in sample.transcript if e.input_tokens is not None or e.output_tokens is not None]
            if not usage:
                total = reported(sample, _TOKEN_KEYS)
                if total is not None:
                    return float(total)
            return float(sum((e.input_tokens or 0) + (e.output_tokens or 0) for e in usage))
        if metric == "tool-call-count":
            return float(len(sample.tool_calls))
        if metric == "error-count":
            return float(len(sample.errors))
        if metric == "turn-count":
            turns = reported_turns(sample)
            return float(turns if turns is not None else sum(e.type == "assistant_message" for e in sample.transcript))
        return sample.duration_ms

    def grade(self, sample: Sample) -> GraderResult:
        value = self._value(sample)
        if value is None:
            return self.error_result(ErrorCode.UNAVAILABLE, "the run reports no duration (duration_ms)")
        limit = self.config.limit
        score = fall_off(value, limit)
        passed = value <= limit
        if self.config.metric == "wall-time":
            shown, bound = format_duration(value / 1000), format_duration(limit / 1000) if limit else "0s"
        else:
            shown, bound = f"{value:g} {_UNIT[self.config.metric]}", f"{limit:g}"
        reason = f"{shown} (within budget of {bound})" if passed else f"{shown} exceeds max of {bound}"
        return self.scored_result(passed, score=score, reason=reason, details={"value": value, "max": limit})
