"""``vally_tool_calls``: Vally's ``tool-calls`` grader
(microsoft.github.io/vally/reference/graders/tool-calls/).

Entries are a tool-name pattern (a string) or a ToolMatch ``{name, command, path, args, result,
min_count, final, at_step, before_step}``. Every pattern is a regular expression searched
unanchored and case-sensitively (a leading ``(?ims)`` sets flags): ``name`` in the tool name,
``command`` / ``path`` / ``args[key]`` in that argument (non-text values as compact JSON, like
``JSON.stringify``), ``result`` in
the call's result (as JSON unless text). A call matches an entry when all its filters match.

- ``required``: at least ``min_count`` (default 1) matching calls, counted among calls in step
  ``at_step`` / before step ``before_step`` when given; with ``final`` the last tool call of the
  run must be one of them.
- ``disallowed``: no call matches.
- ``sequence``: calls matching the entries occur in that relative order (others may come
  between); ``result`` and the positional fields are for ``required`` entries only.

Passes when every check holds; score 1 or 0. Steps are 0-based agent steps (one model turn
each): the turns the Vally dialect recorded from ``turn_start`` / ``turn_end`` events
(``metadata.tool_steps``), else a new step at each assistant message that follows tool use.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from assay.core.grader import Grader, GraderConfig, Taxonomy, Traits
from assay.core.registry import register
from assay.core.result import ErrorCode, GraderResult
from assay.core.sample import Event, Sample
from assay.graders._patterns import CompiledPattern
from assay.graders.tool_calls import pair_results
from assay.graders.vally_output import vally_pattern

_POSITIONAL = ("min_count", "final", "at_step", "before_step")


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)


class ToolMatch(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(description="Pattern searched in the tool name (unanchored: ^name$ for exact).")
    command: str | None = Field(default=None, description="Pattern searched in the command argument.")
    path: str | None = Field(default=None, description="Pattern searched in the path argument.")
    args: dict[str, str] | None = Field(default=None, description="{argument: pattern} searched in each.")
    result: str | None = Field(default=None, description="Pattern searched in the call's result.")
    min_count: int = Field(default=1, ge=1, description="required: fewest matching calls.")
    final: bool = Field(default=False, description="required: the last tool call must match.")
    at_step: int | None = Field(default=None, ge=0, description="required: a match in this step (0-based).")
    before_step: int | None = Field(default=None, ge=1, description="required: a match before this step.")

    _compiled: dict[str, CompiledPattern] = PrivateAttr(default_factory=dict)

    @model_validator(mode="after")
    def _compile(self) -> ToolMatch:
        sources = {"name": self.name, "command": self.command, "path": self.path, "result": self.result,
                   **{f"args.{k}": v for k, v in (self.args or {}).items()}}
        for key, source in sources.items():
            if source is not None:
                self._compiled[key] = vally_pattern(source, key)
        return self

    def matches(self, call: Event, result: Event | None) -> bool:
        """All given filters match ``call`` (and its ``result``). May raise TimeoutError."""
        args = call.arguments or {}
        for key, pat in self._compiled.items():
            if key == "name":
                value: Any = call.name or ""
            elif key == "result":
                if result is None or result.result is None:
                    return False
                value = result.result
            else:
                arg = key.removeprefix("args.")
                if arg not in args:
                    return False
                value = args[arg]
            if not pat.test(_text(value)):
                return False
        return True

    def shown(self) -> str:
        return self.name if self.model_fields_set <= {"name"} else \
            json.dumps(self.model_dump(exclude_defaults=True), ensure_ascii=False)


def _entry(value: Any) -> Any:
    return {"name": value} if isinstance(value, str) else value


class VallyToolCallsConfig(GraderConfig):
    required: list[ToolMatch] = Field(default_factory=list, description="Tools that must be called.")
    disallowed: list[ToolMatch] = Field(default_factory=list, description="Tools that must not be called.")
    sequence: list[ToolMatch] = Field(default_factory=list, description="Tools called in this relative order.")

    @model_validator(mode="before")
    @classmethod
    def _shorthand(cls, data: Any) -> Any:
        if isinstance(data, dict):
            data = {k: [_entry(v) for v in data[k]] if k in ("required", "disallowed", "sequence")
                    and isinstance(data[k], list) else data[k] for k in data}
        return data

    @model_validator(mode="after")
    def _check(self) -> VallyToolCallsConfig:
        if not (self.required or self.disallowed or self.sequence):
            raise ValueError("give at least one of required, disallowed, sequence")
        for field in ("disallowed", "sequence"):
            for i, m in enumerate(getattr(self, field)):
                bad = [k for k in _POSITIONAL if k in m.model_fields_set]
                if bad:
                    raise ValueError(f"{field}[{i}]: {', '.join(bad)} is for required entries only")
        for i, m in enumerate(self.sequence):
            if m.result is not None:
                raise ValueError(f"sequence[{i}]: result is not supported on sequence entries")
        return self


def tool_steps(sample: Sample, calls: int) -> list[int]:
    """The 0-based agent step of each tool call (see the module docstring)."""
    recorded = sample.metadata.get("tool_steps")
    if isinstance(recorded, list) and len(recorded) == calls and all(isinstance(s, int) for s in recorded):
        return recorded
    steps, step, used_tools = [], 0, False
    for e in sample.transcript:
        if e.type == "assistant_message" and used_tools:
            step, used_tools = step + 1, False
        elif e.type in ("tool_call", "tool_result"):
            used_tools = True
            if e.type == "tool_call":
                steps.append(step)
    return steps


@register
class VallyToolCalls(Grader[VallyToolCallsConfig]):
    type = "vally_tool_calls"
    description = "Vally's tool-calls: required / disallowed / ordered tool calls with argument matchers."
    traits = Traits()
    taxonomy = Taxonomy(determinism="static", cost="low", reference="reference-free",
                        temporal_scope="trajectory-level", portability="t1-universal")

    def grade(self, sample: Sample) -> GraderResult:
        pairs = pair_results(sample.transcript)
        steps = tool_steps(sample, len(pairs))
        try:
            problems = self._problems(pairs, steps)
        except TimeoutError:
            return self.error_result(ErrorCode.TIMEOUT, "a tool-call pattern search timed out")
        details = {"tool_calls": [c.name for c, _ in pairs][:200], "problems": problems}
        if problems:
            return self.scored_result(False, reason="; ".join(problems), details=details)
        return self.scored_result(True, reason=f"{len(pairs)} tool call(s) meet every check", details=details)

    def _problems(self, pairs: list[tuple[Event, Event | None]], steps: list[int]) -> list[str]:
        cfg, problems = self.config, []
        for m in cfg.required:
            hits = [i for i, (c, r) in enumerate(pairs) if m.matches(c, r)
                    and (m.at_step is None or steps[i] == m.at_step)
                    and (m.before_step is None or steps[i] < m.before_step)]
            where = (f" at step {m.at_step}" if m.at_step is not None else "") + \
                (f" before step {m.before_step}" if m.before_step is not None else "")
            if len(hits) < m.min_count:
                problems.append(f"required {m.shown()}{where}: {len(hits)} matching call(s), need {m.min_count}")
            elif m.final and (len(pairs) - 1) not in hits:
                problems.append(f"required {m.shown()}: the final tool call does not match")
        for m in cfg.disallowed:
            found = [c.name for c, r in pairs if m.matches(c, r)]
            if found:
                problems.append(f"disallowed {m.shown()} called {len(found)} time(s)")
        if cfg.sequence:
            pos = 0
            for c, r in pairs:
                if pos < len(cfg.sequence) and cfg.sequence[pos].matches(c, r):
                    pos += 1
            if pos < len(cfg.sequence):
                problems.append(f"sequence broken at step {pos + 1}: no {cfg.sequence[pos].shown()} "
                                f"after {', '.join(m.shown() for m in cfg.sequence[:pos]) or 'the start'}")
        return problems
