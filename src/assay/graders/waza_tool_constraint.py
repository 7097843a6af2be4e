"""``waza_tool_constraint``: waza's ``tool_constraint`` grader (microsoft/waza
``internal/graders/tool_constraint_grader.go``, ``docs/graders/tool_constraint.md``).

``expect_tools`` and ``reject_tools`` are lists of ``{tool, command_pattern, path_pattern,
skill_pattern}``: Go regexps, case-insensitive, searched (not anchored) in the call's tool
name and its ``command`` / ``path`` / ``skill`` arguments; an omitted pattern matches
anything. A spec's ``args`` (newer releases; tool_constraint_grader.go at 180230b5) are argument
matchers, as ``waza_tool_calls``'s, that must all pass on the call's arguments (its
``tool_events`` entry's when the run has one). Each expected spec must match some call, each
rejected spec no call; one check per spec, score = passed / checks.

``allow_only`` (tool_constraint_grader.go at a3f8e060, issue #586; what a custom agent's
``tools:`` frontmatter becomes) is an allow-list, an upper bound: every observed call must
match an entry, where the entry's ``tool`` is the exact name ignoring case (not a regex) and its
other patterns and ``args`` apply as above. Declared tools need not be used; ``[]`` denies every
call. It adds one check per observed call (one vacuous check when there are none) and one
failure per distinct undeclared tool name, as waza counts them, so ``[bash, curl, curl]``
against ``[bash]`` scores 2/3.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

from assay.core.grader import Grader, GraderConfig, Taxonomy, Traits
from assay.core.registry import register
from assay.core.result import GraderResult
from assay.core.sample import Sample
from assay.graders._patterns import CompiledPattern, PatternError
from assay.graders._waza import ToolCall, checks_result, go_pattern, session_calls, tools_used
from assay.graders._waza_args import TOOL_EVENTS_KEY, ArgMatcher, check_args, digest_calls, resolved_args

_ARGS = ("command_pattern", "path_pattern", "skill_pattern")


class ToolSpec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    tool: str = Field(description="Regexp for the tool name (case-insensitive).")
    command_pattern: str = Field(default="", description="Regexp for the `command` argument.")
    path_pattern: str = Field(default="", description="Regexp for the `path` argument.")
    skill_pattern: str = Field(default="", description="Regexp for the `skill` argument.")
    args: dict[str, ArgMatcher] = Field(default_factory=dict,
                                        description="Argument name -> matcher; every one must pass on the call.")

    _compiled: dict[str, CompiledPattern] = PrivateAttr(default_factory=dict)

    exact: ClassVar[bool] = False
    """Whether ``tool`` is an exact name (allow_only) rather than a regexp."""

    @field_validator("tool")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("required non-empty string")
        return value.strip()

    @model_validator(mode="after")
    def _compile(self) -> ToolSpec:
        for field in ("tool", *_ARGS):
            if field == "tool" and self.exact:
                continue
            source = getattr(self, field)
            if source:
                try:
                    self._compiled[field] = go_pattern(source, ignore_case=True)
                except PatternError as exc:
                    raise ValueError(f"{field}: {exc}") from None
        return self

    def matches(self, call: ToolCall, args: dict[str, Any] | str) -> bool:
        """True when every pattern given matches its part of the call and every matcher its
        argument (``args``: the call's arguments for matchers, or why they cannot be read)."""
        if self.exact and self.tool.casefold() != call.name.casefold():
            return False
        texts = {"tool": call.name, "command_pattern": _arg(call.arguments, "command"),
                 "path_pattern": _arg(call.arguments, "path"), "skill_pattern": _arg(call.arguments, "skill")}
        if not all(pat.test(texts[field]) for field, pat in self._compiled.items()):
            return False
        return not self.args or (isinstance(args, dict) and not check_args(self.args, args))

    def describe(self) -> str:
        quals = [f"{f}: {getattr(self, f)}" for f in ("command_pattern", "skill_pattern", "path_pattern")
                 if getattr(self, f)]
        if self.args:
            quals.append(f"args: [{', '.join(sorted(self.args))}]")
        return f"{self.tool} ({', '.join(quals)})" if quals else self.tool


class AllowSpec(ToolSpec):
    """An ``allow_only`` entry: ``tool`` is the exact tool name, ignoring case."""

    exact: ClassVar[bool] = True


def _arg(arguments: dict[str, Any], key: str) -> str:
    value = arguments.get(key)
    return value if isinstance(value, str) else ""


class WazaToolConstraintConfig(GraderConfig):
    expect_tools: list[ToolSpec] = Field(default_factory=list, description="Calls that must occur.")
    reject_tools: list[ToolSpec] = Field(default_factory=list, description="Calls that must not occur.")
    allow_only: list[AllowSpec] | None = Field(
        default=None, description="Allow-list: every call must match an entry (exact tool name); [] denies all.")

    @model_validator(mode="after")
    def _some_constraint(self) -> WazaToolConstraintConfig:
        if not self.expect_tools and not self.reject_tools and self.allow_only is None:
            raise ValueError("configure at least one of expect_tools, reject_tools, allow_only")
        return self


@register
class WazaToolConstraint(Grader[WazaToolConstraintConfig]):
    type = "waza_tool_constraint"
    description = "waza's tool_constraint grader: regex specs on tool calls that must or must not occur."
    traits = Traits()
    taxonomy = Taxonomy(reference="reference-free", temporal_scope="trajectory-level")

    def grade(self, sample: Sample) -> GraderResult:
        events = sample.metadata.get(TOOL_EVENTS_KEY)
        events = events if isinstance(events, list) else []
        calls = [(call, resolved_args(call_id, args, events))
                 for call, (_, call_id, args) in zip(session_calls(sample), digest_calls(sample), strict=True)]
        failures = [f"Expected tool not used: {s.describe()}" for s in self.config.expect_tools
                    if not any(s.matches(c, a) for c, a in calls)]
        failures += [f"Rejected tool was used: {s.describe()}" for s in self.config.reject_tools
                     if any(s.matches(c, a) for c, a in calls)]
        total = len(self.config.expect_tools) + len(self.config.reject_tools)
        details: dict[str, Any] = {"expect_tools": [s.describe() for s in self.config.expect_tools],
                                   "reject_tools": [s.describe() for s in self.config.reject_tools],
                                   "tools_used": tools_used(sample)}
        allow = self.config.allow_only
        if allow is not None:
            violations = _violations(allow, calls)
            shown = ", ".join(s.describe() for s in allow)
            failures += [f"Undeclared tool used: {name} ({f'{n} calls; ' if n > 1 else ''}not in allow_only: [{shown}])"
                         for name, n in violations.items()]
            total += max(1, len(calls))  # one check per call; a session without calls is one vacuous pass
            details |= {"allow_only": [s.describe() for s in allow], "allow_only_violations": list(violations)}
        return checks_result(self, failures, total, "tool constraint", details)


def _violations(allow: list[AllowSpec], calls: list[tuple[ToolCall, dict[str, Any] | str]]) -> dict[str, int]:
    """Undeclared tool names in the order first seen, with how many calls each made."""
    out: dict[str, int] = {}
    for call, args in calls:
        if not any(spec.matches(call, args) for spec in allow):
            name = call.name or "<unnamed>"
            out[name] = out.get(name, 0) + 1
    return out
