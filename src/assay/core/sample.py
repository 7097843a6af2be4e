"""Sample: what is graded. A dataset row, or an agent run with its transcript."""

from __future__ import annotations

from functools import cached_property
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

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


_EVENT_TYPES = frozenset(EventType.__args__)


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
