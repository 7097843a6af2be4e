"""``waza_tool_calls``: the Go edition's ``tool_calls`` grader (microsoft/waza, from 0.27;
``internal/graders/tool_calls_grader.go``, ``tool_args.go``, ``argmatcher/matcher.go``).

One check per listed tool and per bound: ``required_tools`` must each be called and
``forbidden_tools`` never (exact names), ``min_calls`` / ``max_calls`` bound the number of
calls. Each ``expect`` entry is one more check: it passes when some call's name matches
``tool`` (a Go regexp, case-insensitive, unanchored; empty matches any) and every ``args``
matcher passes on that call's arguments. With matchers, the run's ``tool_events`` (results
files of schemaVersion 1.1 and later, ``metadata.tool_events``) are read first, since they keep
arguments the session digest drops; when no event has a matching name, the digest's calls are
read. Passed when every check passes; score = passed / checks.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from assay.core.grader import Grader, GraderConfig, Taxonomy, Traits
from assay.core.registry import register
from assay.core.result import GraderResult
from assay.core.sample import Sample
from assay.graders._patterns import CompiledPattern, PatternError
from assay.graders._waza import go_pattern
from assay.graders._waza_args import TOOL_EVENTS_KEY, ArgMatcher, check_args, digest_calls, event_args


class Expectation(BaseModel):
    """An ``expect`` entry: a tool-name regexp and matchers on that call's arguments."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tool: str = Field(description="Go regexp for the tool name (case-insensitive, unanchored).")
    args: dict[str, ArgMatcher] = Field(default_factory=dict,
                                        description="Argument name -> matcher (equals, regex, contains, range, "
                                                    "json_schema); every one must pass on the same call.")

    _tool: CompiledPattern | None = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _compile(self) -> Expectation:
        if not self.tool.strip():
            raise ValueError("tool: required non-empty string")
        try:
            self._tool = go_pattern(self.tool, ignore_case=True)
        except PatternError as exc:
            raise ValueError(f"tool: invalid regex: {exc}") from None
        return self

    def names(self, name: str) -> bool:
        """Whether a call of tool ``name`` is one this expectation is about."""
        return self._tool is None or self._tool.test(name)


class WazaToolCallsConfig(GraderConfig):
    required_tools: list[str] = Field(default_factory=list, description="Tools that must each be called (exact).")
    forbidden_tools: list[str] = Field(default_factory=list, description="Tools that must not be called (exact).")
    min_calls: int | None = Field(default=None, ge=0, description="At least this many tool calls.")
    max_calls: int | None = Field(default=None, ge=0, description="At most this many tool calls.")
    expect: list[Expectation] = Field(default_factory=list,
                                      description="Calls that must occur, by tool-name regexp and argument matchers.")

    @model_validator(mode="after")
    def _some_constraint(self) -> WazaToolCallsConfig:
        if not (self.required_tools or self.forbidden_tools or self.expect
                or self.min_calls is not None or self.max_calls is not None):
            raise ValueError("at least one constraint (required_tools, forbidden_tools, min_calls, max_calls, "
                             "expect) must be specified")
        if self.min_calls is not None and self.max_calls is not None and self.min_calls > self.max_calls:
            raise ValueError(f"min_calls ({self.min_calls}) must be <= max_calls ({self.max_calls})")
        return self


def _expectation(exp: Expectation, calls: list[tuple[str, Any, dict[str, Any]]],
                 events: list[Any]) -> tuple[bool, dict[str, Any]]:
    """waza's ``evaluateExpectation``: whether some call satisfies ``exp``, with its detail."""
    detail: dict[str, Any] = {"tool": exp.tool}
    if exp.args:
        detail["args"] = {k: m.model_dump(exclude_unset=True) for k, m in exp.args.items()}
    last = ""
    if exp.args and events:
        named = 0
        for i, event in enumerate(events):
            if not isinstance(event, Mapping) or not exp.names(str(event.get("tool_name") or "")):
                continue
            named += 1
            args = event_args(event.get("args"))
            if isinstance(args, str):
                last = args
                continue
            failures = check_args(exp.args, args)
            if not failures:
                seq = event.get("sequence")
                detail["matched_call_index"] = seq - 1 if isinstance(seq, int) and seq > 0 else i
                detail.update(matched_tool_event_index=i, matched_call_id=event.get("tool_call_id"))
                return True, detail
            last = "; ".join(failures)
        if named:
            detail["reason"] = last or "no matching call"
            return False, detail
    named = 0
    for i, (name, call_id, args) in enumerate(calls):
        if not exp.names(name):
            continue
        named += 1
        failures = check_args(exp.args, args)
        if not failures:
            detail.update(matched_call_index=i, matched_call_id=call_id)
            return True, detail
        last = "; ".join(failures)
    detail["reason"] = "no tool call with matching name" if not named else (last or "no matching call")
    return False, detail


@register
class WazaToolCalls(Grader[WazaToolCallsConfig]):
    type = "waza_tool_calls"
    description = "waza's tool_calls grader: required/forbidden tools, call bounds, expected calls and their arguments."
    traits = Traits()
    taxonomy = Taxonomy(reference="reference-free", temporal_scope="trajectory-level")

    def grade(self, sample: Sample) -> GraderResult:
        c = self.config
        calls = digest_calls(sample)
        called = {name for name, _, _ in calls}
        failures = [f"required tool {_q(t)} was not called" for t in c.required_tools if t not in called]
        failures += [f"forbidden tool {_q(t)} was called" for t in c.forbidden_tools if t in called]
        if c.min_calls is not None and len(calls) < c.min_calls:
            failures.append(f"expected at least {c.min_calls} tool calls, got {len(calls)}")
        if c.max_calls is not None and len(calls) > c.max_calls:
            failures.append(f"expected at most {c.max_calls} tool calls, got {len(calls)}")
        events = sample.metadata.get(TOOL_EVENTS_KEY)
        events = events if isinstance(events, list) else []
        expected = []
        for exp in c.expect:
            ok, detail = _expectation(exp, calls, events)
            expected.append(detail)
            if not ok:
                failures.append(f"expectation tool={_q(exp.tool)} not satisfied: {detail['reason']}")
        total = len(c.required_tools) + len(c.forbidden_tools) + len(c.expect) + \
            (c.min_calls is not None) + (c.max_calls is not None)
        details: dict[str, Any] = {"total_calls": len(calls), "unique_tools": sorted(called),
                                   "passed_checks": total - len(failures), "total_checks": total}
        if expected:
            details["expect"] = expected
        # waza's own wording when nothing failed ("all tool_calls checks passed")
        return self.scored_result(not failures, (total - len(failures)) / total,
                                  "; ".join(failures) or "all tool_calls checks passed", details)


def _q(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
