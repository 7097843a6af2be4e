"""Sample: what is graded. A dataset row, or an agent run with its transcript."""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import cached_property
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator

from assay.core._unvalidated import build, shared_keys

EventType = Literal["assistant_message", "tool_call", "tool_result", "error", "token_usage", "user_message"]


class Event(BaseModel):
    """One step of an agent transcript."""

    model_config = ConfigDict(extra="forbid")

    type: EventType
    timestamp: str | float | None = Field(default=None, description="ISO 8601 or epoch seconds.")
    content: str | None = Field(default=None, description="Message text (assistant/user messages).")
    name: str | None = Field(default=None, description="Tool name (tool_call).")
    call_id: str | None = Field(default=None, description="Links a tool_call to its tool_result.")
    arguments: dict[str, Any] | None = Field(default=None, description="Tool arguments (tool_call).")
    success: bool | None = Field(default=None, description="Whether the tool succeeded (tool_result).")
    result: Any = Field(default=None, description="Tool output (tool_result).")
    message: str | None = Field(default=None, description="Error text (error).")
    input_tokens: int | None = None
    output_tokens: int | None = None


_EVENT_KEYS = frozenset(Event.model_fields)


_EVENT_TYPES = frozenset(get_args(EventType))


def _is_native(entry: Any) -> bool:
    return isinstance(entry, Event) or (
        isinstance(entry, dict) and entry.get("type") in _EVENT_TYPES and entry.keys() <= _EVENT_KEYS)


class Sample(BaseModel):
    """One thing to grade.

    ``input``, ``output`` and ``expected`` are usually strings but may hold any JSON value.
    ``tool_calls`` and ``errors`` derive from ``transcript``.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(min_length=1, description="Unique within a dataset.")
    input: Any = None
    output: Any = None
    expected: Any = None
    metadata: dict[str, Any] = Field(default_factory=dict)
    transcript: list[Event] = Field(default_factory=list)
    outcome: dict[str, Any] | None = None
    duration_ms: float | None = Field(default=None, ge=0.0, allow_inf_nan=False)
    workspace: str | None = Field(default=None, description="A directory, for program graders.")

    @field_validator("id", mode="before")
    @classmethod
    def _id_as_text(cls, value: Any) -> Any:
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        return value

    @field_validator("transcript", mode="before")
    @classmethod
    def _normalise_transcript(cls, value: Any) -> Any:
        """Accept Vally trajectories and waza transcripts as well as assay's own events."""
        if isinstance(value, list) and all(_is_native(e) for e in value):
            return value
        from assay.core.transcript import parse_transcript  # imports this module

        return parse_transcript(value)

    @cached_property
    def tool_calls(self) -> list[Event]:
        return [e for e in self.transcript if e.type == "tool_call"]

    @cached_property
    def errors(self) -> list[Event]:
        return [e for e in self.transcript if e.type == "error"]


# Building Samples without pydantic, for the rows of a batch that validation would keep exactly
# as given (``grade_batch`` on plain dicts spent two thirds of its time validating them).

_NO_ID = object()
# Field order as validation builds __dict__, with keys shared among Samples (a compact copy).
_BLANK = shared_keys(Sample, {name: None for name in Sample.model_fields} | {"id": _NO_ID})
_PLAIN_KEYS = frozenset({"id", "input", "output", "expected"})  # the id, and fields taking any value
_KNOWN_KEYS = _PLAIN_KEYS | {"metadata", "outcome", "transcript", "duration_ms", "workspace"}


def trusted_samples(rows: Sequence[Any]) -> list[Sample | None]:
    """``Sample.model_validate({"id": str(i), **row})`` for each plain-dict ``row`` whose values
    validation would keep as they are, built directly (same fields, same field set); a Sample
    passes through; None for any other row, which the caller validates.

    Kept as given: an ``id`` that is non-empty text or an int (made text); any ``input``,
    ``output`` and ``expected``; ``metadata`` and ``outcome`` dicts with text keys (copied, as
    validation does); an empty ``transcript``; a finite ``duration_ms`` >= 0; a text
    ``workspace``. Anything else (a str subclass, a bool, a non-empty transcript) is left to
    validation, which converts or refuses it.
    """
    out: list[Sample | None] = []
    last_keys: Any = None  # the previous row's keys, and for them (field set, only plain keys?)
    known: tuple[set[str], bool] | None = None
    for i, row in enumerate(rows):
        if row.__class__ is not dict:
            out.append(row if isinstance(row, Sample) else None)
            continue
        keys = row.keys()
        if keys != last_keys:  # compared as sets: a new shape
            last_keys = keys
            known = ({"id", *keys}, keys <= _PLAIN_KEYS) if keys <= _KNOWN_KEYS else None
        if known is None:
            out.append(None)
            continue
        fields = _BLANK.copy()
        fields.update(row)
        ident = fields["id"]
        if ident.__class__ is not str or not ident:
            if ident is _NO_ID:
                fields["id"] = str(i)
            elif ident.__class__ is int and -(2**63) <= ident < 2**63:
                fields["id"] = str(ident)
            else:
                out.append(None)
                continue
        if known[1]:
            fields["metadata"] = {}
            fields["transcript"] = []
        elif not _kept(row, fields):
            out.append(None)
            continue
        out.append(build(Sample, fields, known[0]))  # the field set shared by rows of one shape
    return out


def _kept(row: dict[str, Any], fields: dict[str, Any]) -> bool:
    """Set the fields beyond the plain four as validation would (copying the dicts, as it
    does); False when validation would convert or refuse one of them."""
    for name in ("metadata", "outcome"):
        if name not in row:
            continue
        value = row[name]
        if value is None and name == "outcome":
            continue
        if value.__class__ is not dict or not all(k.__class__ is str for k in value):
            return False
        fields[name] = dict(value)
    if "metadata" not in row:
        fields["metadata"] = {}
    transcript = row.get("transcript", [])
    if transcript.__class__ is not list or transcript:
        return False
    fields["transcript"] = []
    duration = row.get("duration_ms")
    if duration.__class__ is int and 0 <= duration < 2**53:
        fields["duration_ms"] = float(duration)
    elif duration is not None and not (duration.__class__ is float and 0.0 <= duration < math.inf):
        return False
    workspace = row.get("workspace")
    return workspace is None or workspace.__class__ is str
