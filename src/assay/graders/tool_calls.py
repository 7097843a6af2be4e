"""``tool_calls``: waza's tool-usage grader, extended to match arguments and results and to
check an ordered ``sequence``.

A pattern is a string (shorthand for ``{pattern: ...}``) or an object whose given facets
must all match one call:

* ``pattern``: searched in the tool name, in ``name + " " + arguments-as-JSON`` and in each
  text argument (so ``"azd up"`` finds ``bash {"command": "azd up --no-prompt"}``);
* ``name``: the whole tool name (anchored);
* ``arguments``: ``{key: regex}`` searched in each named argument, or one regex searched in
  the arguments as JSON;
* ``result``: searched in the call's tool result; ``success``: the result's success flag.

Checks: each ``required`` pattern matches some call; each ``forbidden`` pattern matches none;
``min_calls`` / ``max_calls`` bound the number of calls; ``sequence`` patterns match calls in
that order (other calls may come between). Score = checks passed / checks.
Matching ignores case unless ``ignore_case`` is false (waza matched case-insensitively).
All the matching for one sample shares one time budget (``timeout_ms``); past it the result is a
``timeout`` error, however many calls and patterns there are.
"""

from __future__ import annotations

import json
import time
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, field_validator, model_validator

from assay.core.grader import Grader, GraderConfig, Taxonomy, Traits
from assay.core.registry import register
from assay.core.result import ErrorCode, GraderResult
from assay.core.sample import Event, Sample
from assay.core.untrusted import TooDeep, clean_json
from assay.graders._patterns import CompiledPattern, PatternError
from assay.graders._text import as_text, preview

SHOWN = 100
"""Characters of a pattern quoted in a reason or in details."""


class ToolPattern(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    pattern: str | None = Field(
        default=None, description="Regex on the name, the name with arguments, or a text argument.")
    name: str | None = Field(default=None, description="Regex the whole tool name must match.")
    arguments: dict[str, str] | str | None = Field(
        default=None,
        description="{argument: regex} each searched in that argument, or one regex over the arguments JSON.")
    result: str | None = Field(default=None, description="Regex searched in the call's result.")
    success: bool | None = Field(default=None, description="Required success flag of the call's result.")

    @model_validator(mode="after")
    def _something(self) -> ToolPattern:
        if self.pattern is None and self.name is None and self.arguments is None and self.result is None \
                and self.success is None:
            raise ValueError("a tool pattern needs at least one of pattern, name, arguments, result, success")
        return self

    def describe(self) -> str:
        """The pattern for a reason line, shortened to ``SHOWN`` characters."""
        parts = [f"{k}={v!r}" for k, v in self.model_dump(exclude_none=True).items()]
        text = self.pattern if parts == [f"pattern={self.pattern!r}"] else "{" + ", ".join(parts) + "}"
        return preview(text or "", SHOWN)


def _as_pattern(value: Any) -> Any:
    return {"pattern": value} if isinstance(value, str) else value


class ToolCallsConfig(GraderConfig):
    required: list[ToolPattern] = Field(default_factory=list, description="Patterns some call must match.")
    forbidden: list[ToolPattern] = Field(default_factory=list, description="Patterns no call may match.")
    sequence: list[ToolPattern] = Field(default_factory=list, description="Patterns calls must match in this order.")
    max_calls: int | None = Field(default=None, ge=0, description="Most tool calls allowed.")
    min_calls: int | None = Field(default=None, ge=0, description="Fewest tool calls required.")
    ignore_case: bool = Field(default=True, description="Match patterns case-insensitively.")
    timeout_ms: int = Field(default=1000, ge=1, le=60_000,
                            description="Time budget for matching one sample: all its calls against all "
                                        "patterns. Past it the result is a timeout error.")

    _matchers: dict[str, list[Any]] = PrivateAttr(default_factory=dict)

    @property
    def matchers(self) -> dict[str, list[ToolMatcher]]:
        """Prepared state: ``required``, ``forbidden`` and ``sequence`` each as a list of
        ``ToolMatcher``s (one per pattern, in order), compiled once when the config is validated."""
        return self._matchers

    @field_validator("required", "forbidden", "sequence", mode="before")
    @classmethod
    def _shorthand(cls, value: Any) -> Any:
        return [_as_pattern(v) for v in value] if isinstance(value, list) else value

    @model_validator(mode="after")
    def _compile(self) -> ToolCallsConfig:
        if not (self.required or self.forbidden or self.sequence) and self.max_calls is None \
                and self.min_calls is None:
            raise ValueError("give required, forbidden, sequence, min_calls or max_calls")
        if self.min_calls is not None and self.max_calls is not None and self.min_calls > self.max_calls:
            raise ValueError("min_calls is greater than max_calls")
        flags = "i" if self.ignore_case else ""
        timeout = self.timeout_ms / 1000

        def comp(src: str, where: str, anchored: bool = False) -> CompiledPattern:
            try:
                return CompiledPattern(src, flags, timeout_s=timeout, anchored=anchored)
            except PatternError as exc:
                raise ValueError(f"{where}: {exc}") from None

        for group in ("required", "forbidden", "sequence"):
            self._matchers[group] = matchers = []
            for i, p in enumerate(getattr(self, group)):
                where = f"{group}[{i}]"
                args = p.arguments
                matchers.append(ToolMatcher(
                    pattern=comp(p.pattern, where) if p.pattern is not None else None,
                    name=comp(p.name, where, anchored=True) if p.name is not None else None,
                    args={k: comp(v, f"{where}.arguments.{k}") for k, v in args.items()}
                    if isinstance(args, dict) else None,
                    args_text=comp(args, f"{where}.arguments") if isinstance(args, str) else None,
                    result=comp(p.result, f"{where}.result") if p.result is not None else None,
                    success=p.success,
                ))
        return self


class _Call:
    """One tool call (and its result) as the matchers read it, rendered once per sample."""

    __slots__ = ("name", "args", "args_json", "texts", "result", "result_text")

    def __init__(self, call: Event, result: Event | None) -> None:
        self.name = name = call.name or ""
        args = call.arguments or {}
        self.args = {key: as_text(value) for key, value in args.items()}
        self.args_json = _args_json(args) if args else ""
        self.texts = [name, f"{name} {self.args_json}".strip()] + [v for v in args.values() if isinstance(v, str)]
        if call.content:
            self.texts.append(call.content)
        self.result = result
        self.result_text = as_text(result.result) if result is not None else ""


def _args_json(args: dict[str, Any]) -> str:
    try:
        return json.dumps(args, sort_keys=True, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):  # not plain JSON: sets, mixed key types, objects
        return json.dumps(clean_json(args), sort_keys=True, ensure_ascii=False)


class ToolMatcher:
    """A ``ToolPattern`` compiled: each facet it gives as a ``CompiledPattern`` (``name``
    anchored), the others None."""

    __slots__ = ("pattern", "name", "args", "args_text", "result", "success")

    pattern: CompiledPattern | None
    name: CompiledPattern | None
    args: dict[str, CompiledPattern] | None
    args_text: CompiledPattern | None
    result: CompiledPattern | None
    success: bool | None

    def __init__(self, **kw: Any) -> None:
        for k, v in kw.items():
            setattr(self, k, v)

    def matches(self, call: _Call, deadline: float) -> bool:
        """Whether every facet matches; TimeoutError once ``deadline`` (monotonic) has passed."""
        if self.name is not None and not self.name.test(call.name, deadline):
            return False
        if self.pattern is not None and not any(self.pattern.test(t, deadline) for t in call.texts):
            return False
        if self.args is not None:
            for key, pat in self.args.items():
                if key not in call.args or not pat.test(call.args[key], deadline):
                    return False
        if self.args_text is not None and not self.args_text.test(call.args_json, deadline):
            return False
        result = call.result
        if self.result is not None and (result is None or not self.result.test(call.result_text, deadline)):
            return False
        if self.success is not None and (result is None or result.success is not self.success):
            return False
        return True


def pair_results(transcript: list[Event]) -> list[tuple[Event, Event | None]]:
    """Each tool call with its result: by call id, else the next unclaimed result of that name."""
    by_id = {e.call_id: e for e in transcript if e.type == "tool_result" and e.call_id}
    pending: list[Event] = [e for e in transcript if e.type == "tool_result" and not e.call_id]
    pairs = []
    for e in transcript:
        if e.type != "tool_call":
            continue
        res = by_id.get(e.call_id) if e.call_id else None
        if res is None:
            for j, cand in enumerate(pending):
                if cand.name in (None, e.name):
                    res = pending.pop(j)
                    break
        pairs.append((e, res))
    return pairs


@register
class ToolCalls(Grader[ToolCallsConfig]):
    type = "tool_calls"
    description = "Tool usage (waza): required / forbidden call patterns, call counts, an ordered sequence."
    traits = Traits()
    taxonomy = Taxonomy(determinism="static", cost="free", portability="t2-domain",
                        reference="reference-free", temporal_scope="trajectory-level")

    def grade(self, sample: Sample) -> GraderResult:
        cfg = self.config
        deadline = time.monotonic() + cfg.timeout_ms / 1000
        try:
            calls = [_Call(call, res) for call, res in pair_results(sample.transcript)]
        except TooDeep as exc:
            return self.error_result(ErrorCode.INVALID_OUTPUT, f"a tool call's arguments or result is {exc}")
        checks: list[dict[str, Any]] = []
        try:
            comp = cfg.matchers
            for p, m in zip(cfg.required, comp["required"]):
                hits = _hits(m, calls, deadline)
                checks.append({"check": "required", "pattern": p.describe(), "passed": bool(hits), "calls": hits})
            for p, m in zip(cfg.forbidden, comp["forbidden"]):
                hits = _hits(m, calls, deadline)
                checks.append({"check": "forbidden", "pattern": p.describe(), "passed": not hits, "calls": hits})
            if cfg.sequence:
                checks.append(_sequence(cfg.sequence, comp["sequence"], calls, deadline))
        except TimeoutError:
            patterns = len(cfg.required) + len(cfg.forbidden) + len(cfg.sequence)
            return self.error_result(ErrorCode.TIMEOUT, f"matching {len(calls)} tool calls against {patterns} patterns "
                                     f"took longer than the {cfg.timeout_ms} ms budget per sample (config timeout_ms; "
                                     f"a pattern that needs backtracking may be catastrophic)")
        n = len(calls)
        if cfg.min_calls is not None:
            checks.append({"check": "min_calls", "limit": cfg.min_calls, "count": n, "passed": n >= cfg.min_calls})
        if cfg.max_calls is not None:
            checks.append({"check": "max_calls", "limit": cfg.max_calls, "count": n, "passed": n <= cfg.max_calls})
        failures = [_failure(c) for c in checks if not c["passed"]]
        passed = sum(c["passed"] for c in checks)
        reason = "; ".join(failures) if failures else f"{passed}/{len(checks)} tool checks passed"
        return self.scored_result(not failures, passed / len(checks), reason,
                                  {"checks": checks, "total_tool_calls": n,
                                   "tools_used": sorted({c.name for c in calls if c.name})})


def _hits(m: ToolMatcher, calls: list[_Call], deadline: float) -> list[int]:
    return [i for i, call in enumerate(calls) if m.matches(call, deadline)]


def _sequence(seq: list[ToolPattern], matchers: list[ToolMatcher], calls: list[_Call],
              deadline: float) -> dict[str, Any]:
    matched: list[int] = []
    pos = 0
    for m in matchers:
        while pos < len(calls) and not m.matches(calls[pos], deadline):
            pos += 1
        if pos == len(calls):
            break
        matched.append(pos)
        pos += 1
    ok = len(matched) == len(seq)
    row: dict[str, Any] = {"check": "sequence", "pattern": [p.describe() for p in seq], "passed": ok,
                           "calls": matched}
    if not ok:
        row["missing_step"] = len(matched)
    return row


def _failure(check: dict[str, Any]) -> str:
    kind = check["check"]
    if kind == "required":
        return f"no tool call matches {check['pattern']}"
    if kind == "forbidden":
        calls = check["calls"]
        listed = ", ".join(map(str, calls[:10])) + (f" and {len(calls) - 10} more" if len(calls) > 10 else "")
        return f"forbidden tool call {check['pattern']} made (call {listed})"
    if kind == "sequence":
        step = check["missing_step"]
        return f"tool sequence broken at step {step + 1}: no later call matches {check['pattern'][step]}"
    if kind == "min_calls":
        return f"too few tool calls: {check['count']} < {check['limit']}"
    return f"too many tool calls: {check['count']} > {check['limit']}"
