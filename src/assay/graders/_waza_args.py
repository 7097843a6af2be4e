"""waza's argument matchers (microsoft/waza ``internal/graders/argmatcher/matcher.go``) and the
tool-call argument maps they read (``internal/graders/tool_args.go``). Pure.

A matcher is a mapping with exactly one kind: ``equals`` (deep equality after a JSON round
trip, so ``1`` equals ``1.0`` but ``true`` does not equal ``1``), ``regex`` (a Go regexp,
case-sensitive, searched in the value's text), ``contains`` (a substring of the value's text),
``range`` (``gte``/``lte``/``gt``/``lt`` on a number; text is not a number) or ``json_schema``.
A value's text is the string itself, else its compact JSON (null is the empty string).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from assay.core.sample import Sample
from assay.graders._patterns import CompiledPattern, PatternError
from assay.graders._waza import go_pattern, session_calls

KINDS = ("equals", "regex", "contains", "range", "json_schema")

TOOL_EVENTS_KEY = "tool_events"
"""Where a sample's metadata keeps the run's ``tool_events`` from a waza results file."""


class Bounds(BaseModel):
    """``range`` bounds: inclusive ``gte``/``lte``, exclusive ``gt``/``lt``; at least one."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    gte: float | None = Field(default=None, description="The value must be >= this.")
    lte: float | None = Field(default=None, description="The value must be <= this.")
    gt: float | None = Field(default=None, description="The value must be > this.")
    lt: float | None = Field(default=None, description="The value must be < this.")


class ArgMatcher(BaseModel):
    """One argument matcher: exactly one of its five kinds."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    equals: Any = Field(default=None, description="The value must equal this (JSON equality; null matches null).")
    regex: str | None = Field(default=None, description="Go regexp searched in the value's text (case-sensitive).")
    contains: str | None = Field(default=None, description="Substring that must occur in the value's text.")
    range: Bounds | None = Field(default=None, description="Numeric bounds the value must lie within.")
    json_schema: dict[str, Any] | None = Field(default=None, description="JSON Schema the value must satisfy.")

    _pattern: CompiledPattern | None = PrivateAttr(default=None)
    _schema: Any = PrivateAttr(default=None)

    @property
    def kind(self) -> str:
        """The one kind this matcher was written with."""
        return next(k for k in KINDS if k in self.model_fields_set)

    @model_validator(mode="before")
    @classmethod
    def _shape(cls, value: Any) -> Any:
        # waza's own wording for a matcher that is not a mapping or names an unknown kind
        if not isinstance(value, Mapping):
            raise ValueError(f"expected mapping (e.g. {{regex: '^foo'}}), got {type(value).__name__}")
        unknown = [k for k in value if k not in KINDS]
        if unknown:
            raise ValueError(f"unknown matcher kind {json.dumps(str(unknown[0]))} (allowed: {', '.join(KINDS)})")
        return value

    @model_validator(mode="after")
    def _one_kind(self) -> ArgMatcher:
        given = [k for k in KINDS if k in self.model_fields_set]
        if not given:
            raise ValueError("empty matcher; expected one of equals, regex, contains, range, json_schema")
        if len(given) > 1:
            raise ValueError(f"exactly one matcher kind allowed, got {len(given)} ({', '.join(given)})")
        kind = given[0]
        if kind == "regex":
            if not self.regex:
                raise ValueError("regex matcher requires a non-empty pattern")
            try:
                self._pattern = go_pattern(self.regex)
            except PatternError as exc:
                raise ValueError(f"invalid regex {self.regex!r}: {exc}") from None
        elif kind == "contains" and not self.contains:
            raise ValueError("contains matcher requires a non-empty substring")
        elif kind == "range" and (self.range is None or not self.range.model_fields_set):
            raise ValueError("range matcher requires at least one bound (gte, lte, gt, lt)")
        elif kind == "json_schema":
            if not self.json_schema:
                raise ValueError("json_schema matcher requires a non-empty schema")
            from assay.graders.json_schema import compile_schema  # the project's one schema compiler
            try:
                self._schema = compile_schema(self.json_schema)
            except ValueError as exc:
                raise ValueError(f"invalid json_schema: {exc}") from None
        return self

    def match(self, value: Any) -> tuple[bool, str]:
        """Whether ``value`` satisfies the matcher, and waza's explanation."""
        kind = self.kind
        if kind == "equals":
            want, got = _normal(self.equals), _normal(value)
            if _same(want, got):
                return True, f"equals {_render(want)}"
            return False, f"expected {_render(want)}, got {_render(got)}"
        if kind == "regex":
            assert self._pattern is not None
            text = as_text(value)
            if self._pattern.test(text):
                return True, f"regex {json.dumps(self.regex)} matched"
            return False, f"regex {json.dumps(self.regex)} did not match {json.dumps(text, ensure_ascii=False)}"
        if kind == "contains":
            text = as_text(value)
            if (self.contains or "") in text:
                return True, f"contains {json.dumps(self.contains)}"
            return False, f"expected substring {json.dumps(self.contains)}, got {json.dumps(text, ensure_ascii=False)}"
        if kind == "range":
            return _in_range(self.range or Bounds(), value)
        errors = [e.message for e in self._schema.iter_errors(_normal(value))]
        return (False, f"json_schema: {errors[0]}") if errors else (True, "json_schema: valid")


def _normal(value: Any) -> Any:
    """A value after a JSON round trip (tuples become lists, mapping keys text)."""
    try:
        return json.loads(json.dumps(value))
    except (TypeError, ValueError):
        return value


def _same(a: Any, b: Any) -> bool:
    # Go's reflect.DeepEqual on decoded JSON: bool and number never equal, 1 equals 1.0.
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return float(a) == float(b)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def as_text(value: Any) -> str:
    """waza's ``toString``: the string itself, "" for null, else compact JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return _render(value)


def _render(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, float) and value.is_integer() and math.isfinite(value):
        return str(int(value))  # Go's encoding/json writes 5.0 as 5
    try:
        return json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(value)


def _in_range(bounds: Bounds, value: Any) -> tuple[bool, str]:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False, f"range: value {as_text(value) if value is not None else '<nil>'} is not numeric"
    n = float(value)
    show = _render(n)
    if bounds.gte is not None and n < bounds.gte:
        return False, f"range: {show} < gte {_render(bounds.gte)}"
    if bounds.gt is not None and n <= bounds.gt:
        return False, f"range: {show} <= gt {_render(bounds.gt)}"
    if bounds.lte is not None and n > bounds.lte:
        return False, f"range: {show} > lte {_render(bounds.lte)}"
    if bounds.lt is not None and n >= bounds.lt:
        return False, f"range: {show} >= lt {_render(bounds.lt)}"
    return True, f"range: {show} within bounds"


def check_args(matchers: Mapping[str, ArgMatcher], args: Mapping[str, Any]) -> list[str]:
    """waza's ``evaluateArgMatchers``: one failure per matcher (in key order) whose argument
    is absent or whose value does not match; empty when every matcher passed."""
    failures = []
    for key in sorted(matchers):
        if key not in args:
            failures.append(f"argument {json.dumps(key)}: not present on tool call")
            continue
        ok, why = matchers[key].match(args[key])
        if not ok:
            failures.append(f"argument {json.dumps(key)}: {why}")
    return failures


def call_args(arguments: Any) -> dict[str, Any]:
    """A session-digest call's arguments as the matchers see them (``normalizeToolCallArgs``):
    empty text values are left out, as waza leaves out unset known fields."""
    if not isinstance(arguments, Mapping):
        return {}
    return {str(k): v for k, v in arguments.items() if v != ""}


def event_args(args: Any) -> dict[str, Any] | str:
    """A ``tool_events`` entry's ``args`` as a mapping, or waza's error when they are not an
    object (``normalizeToolEventArgs``)."""
    if args is None:
        return {}
    if isinstance(args, Mapping):
        return {str(k): v for k, v in args.items()}
    return f"unmarshaling tool event args as object: cannot use {as_text(args)} as an object"


def digest_calls(sample: Sample) -> list[tuple[str, Any, dict[str, Any]]]:
    """(name, id, arguments as matchers see them) of each call in order, from the session
    digest's raw entries when the sample has them, else from its transcript."""
    digest = sample.metadata.get("session_digest")
    raw = digest.get("tool_calls") if isinstance(digest, Mapping) else None
    if isinstance(raw, list):
        return [(str(c.get("name") or ""), c.get("id") or c.get("tool_call_id"), call_args(c.get("arguments")))
                for c in raw if isinstance(c, Mapping)]
    return [(c.name, None, call_args(c.arguments)) for c in session_calls(sample)]


def resolved_args(call_id: Any, args: dict[str, Any], events: list[Any]) -> dict[str, Any] | str:
    """A call's arguments for matchers: its ``tool_events`` entry's (same ``tool_call_id``),
    which keep what the digest drops, when there is one; else the digest's."""
    if call_id is not None:
        for event in events:
            if isinstance(event, Mapping) and event.get("tool_call_id") == call_id:
                return event_args(event.get("args"))
    return args
