"""``waza_behavior``: waza's ``behavior`` grader (microsoft/waza
``internal/graders/behavior_grader.go``, ``docs/graders/behavior.md``).

Rules on the run's session: ``max_tool_calls`` (tool calls ≤ it), ``max_tokens`` (input +
output tokens ≤ it; passes when no usage was recorded), ``required_tools`` (each name used at
least once; exact, case-sensitive), ``forbidden_tools`` (none used), ``max_duration_ms``
(the run's ``duration_ms`` ≤ it; an unknown duration counts as 0, as in waza). A limit of 0
or less is not checked (a negative one still counts as "a rule configured", as in waza).
One check per limit set and per listed tool; score = passed / checks.
"""

from __future__ import annotations

from pydantic import Field, model_validator

from assay.core.grader import Grader, GraderConfig, Taxonomy, Traits
from assay.core.registry import register
from assay.core.result import GraderResult
from assay.core.sample import Sample
from assay.graders._waza import checks_result, token_total, tool_call_count, tools_used


class WazaBehaviorConfig(GraderConfig):
    max_tool_calls: int = Field(default=0, description="Most tool calls allowed (0 or less: no limit).")
    max_tokens: int = Field(default=0, description="Most input + output tokens allowed (0 or less: no limit).")
    required_tools: list[str] = Field(default_factory=list, description="Tools that must be used.")
    forbidden_tools: list[str] = Field(default_factory=list, description="Tools that must not be used.")
    max_duration_ms: int = Field(default=0, description="Longest run allowed, in ms (0 or less: no limit).")

    @model_validator(mode="after")
    def _some_rule(self) -> WazaBehaviorConfig:
        if not (self.max_tool_calls or self.max_tokens or self.required_tools or self.forbidden_tools
                or self.max_duration_ms):
            raise ValueError("configure at least one rule (max_tool_calls, max_tokens, required_tools, "
                             "forbidden_tools, max_duration_ms)")
        return self


@register
class WazaBehavior(Grader[WazaBehaviorConfig]):
    type = "waza_behavior"
    description = "waza's behavior grader: tool-call, token and duration limits; required and forbidden tools."
    traits = Traits()
    taxonomy = Taxonomy(reference="reference-free", temporal_scope="trajectory-level")

    def grade(self, sample: Sample) -> GraderResult:
        c = self.config
        calls, used, tokens = tool_call_count(sample), tools_used(sample), token_total(sample)
        duration = int(sample.duration_ms or 0)
        failures: list[str] = []
        if c.max_tool_calls > 0 and calls > c.max_tool_calls:
            failures.append(f"Tool call count {calls} exceeds max allowed {c.max_tool_calls}")
        if c.max_tokens > 0 and tokens is not None and tokens > c.max_tokens:
            failures.append(f"Token usage {tokens} exceeds max allowed {c.max_tokens}")
        seen = set(used)
        failures += [f"Required tool not used: {t}" for t in c.required_tools if t not in seen]
        failures += [f"Forbidden tool was used: {t}" for t in c.forbidden_tools if t in seen]
        if c.max_duration_ms > 0 and duration > c.max_duration_ms:
            failures.append(f"Duration {duration}ms exceeds max allowed {c.max_duration_ms}ms")
        total = (c.max_tool_calls > 0) + (c.max_tokens > 0) + len(c.required_tools) + \
            len(c.forbidden_tools) + (c.max_duration_ms > 0)
        details = {"tool_call_count": calls, "tools_used": used, "actual_duration": duration}
        if tokens is not None:
            details["tokens_total"] = tokens
        return checks_result(self, failures, total, "behavior", details)
