"""Agent transcripts in, ``list[Event]`` out; and back out in Vally and waza shapes. Pure.

Accepted inputs, per entry (mixed freely):

* assay's own events: ``{"type": "tool_call", "name", "call_id", "arguments", ...}``;
* Vally trajectory events: ``{"type", "timestamp", "data": {"toolName", "toolCallId",
  "arguments", "success", "result", "content", ...}}`` (fields flat or under ``data``), or a
  whole trajectory ``{"events": [...], ...}``;
* waza transcripts: Copilot-SDK session events (``user.message``, ``assistant.message``,
  ``tool.execution_start``, ``tool.execution_complete``, ``session.error``), waza's
  normalised conversation (``{"role": "user" | "assistant" | "tool", "content", "name"}``)
  and its legacy entries (``{"type": "tool_call", "tool", "args"}``, ``{"type": "response"}``).

Entries of unknown types (``session.idle``, ``turn_start``, system messages) are skipped: they
carry nothing a grader reads. A tool result without a name takes its call's name.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from assay.core.errors import AssayError
from assay.core.sample import Event, Sample


class TranscriptError(AssayError, ValueError):
    """A transcript entry cannot be read; ``index`` is its position."""

    def __init__(self, message: str, index: int | None = None) -> None:
        self.index = index
        super().__init__(f"transcript[{index}]: {message}" if index is not None else message)


_TYPES = {
    "tool_call": "tool_call", "tool.call": "tool_call", "tool.execution_start": "tool_call",
    "tool_use": "tool_call", "function_call": "tool_call", "toolcall": "tool_call",
    "tool_result": "tool_result", "tool.result": "tool_result",
    "tool.execution_complete": "tool_result", "tool_output": "tool_result",
    "function_call_output": "tool_result", "toolresult": "tool_result",
    "assistant_message": "assistant_message", "assistant.message": "assistant_message",
    "assistant": "assistant_message", "response": "assistant_message",
    "user_message": "user_message", "user.message": "user_message", "user": "user_message",
    "error": "error", "session.error": "error",
    "token_usage": "token_usage", "usage": "token_usage", "assistant.usage": "token_usage",
}
_ROLES = {"assistant": "assistant_message", "user": "user_message", "tool": "tool_call"}
_EVENT_FIELDS = frozenset(Event.model_fields)


def parse_transcript(raw: Any) -> list[Event]:
    """Normalise a transcript (a list of entries, or a Vally trajectory / any mapping holding
    ``events`` or ``transcript``) into assay events. Raises TranscriptError."""
    if raw is None:
        return []
    if isinstance(raw, Mapping):
        for key in ("events", "transcript"):
            if key in raw:
                return parse_transcript(raw[key])
        raise TranscriptError("a transcript mapping must hold 'events' or 'transcript'")
    if not isinstance(raw, list):
        raise TranscriptError(f"a transcript must be a list of events, got {type(raw).__name__}")
    events: list[Event] = []
    for i, entry in enumerate(raw):
        if isinstance(entry, Event):
            events.append(entry)
            continue
        if not isinstance(entry, Mapping):
            raise TranscriptError(f"an event must be a mapping, got {type(entry).__name__}", i)
        try:
            event = parse_event(entry)
        except (ValidationError, TypeError, ValueError) as exc:
            raise TranscriptError(_short(exc), i) from None
        if event is not None:
            events.append(event)
    _name_results(events)
    return events


def parse_event(entry: Mapping[str, Any]) -> Event | None:
    """One entry as an Event, or None when its type carries nothing to grade."""
    kind = entry.get("type")
    if kind in _TYPES and set(entry) <= _EVENT_FIELDS and "data" not in entry:
        if _TYPES[kind] == kind:  # already assay-shaped: validate as is
            return Event.model_validate(dict(entry))
    flat: dict[str, Any] = {}
    data = entry.get("data")
    if isinstance(data, Mapping):
        flat.update(data)
    flat.update({k: v for k, v in entry.items() if k != "data"})
    if isinstance(kind, str):
        etype = _TYPES.get(kind.lower())
        if kind == "message" or (etype is None and "role" in flat):
            etype = _ROLES.get(str(flat.get("role", "")).lower())
    else:
        etype = _ROLES.get(str(flat.get("role", "")).lower())
    if etype is None:
        return None
    out: dict[str, Any] = {"type": etype, "timestamp": _first(flat, "timestamp", "ts", "time", "created_at")}
    if etype in ("assistant_message", "user_message"):
        out["content"] = _text(_first(flat, "content", "text", "message"))
    elif etype == "tool_call":
        out["name"] = _str(_first(flat, "name", "toolName", "tool_name", "tool"))
        out["call_id"] = _str(_first(flat, "call_id", "toolCallId", "tool_call_id", "callId", "id"))
        out["arguments"] = _arguments(_first(flat, "arguments", "args", "input", "parameters"))
        if "content" in flat and flat["content"] is not None:
            out["content"] = _text(flat["content"])
    elif etype == "tool_result":
        out["name"] = _str(_first(flat, "name", "toolName", "tool_name", "tool"))
        out["call_id"] = _str(_first(flat, "call_id", "toolCallId", "tool_call_id", "callId", "id"))
        out["success"] = _success(flat)
        out["result"] = _first(flat, "result", "tool_result", "output", "content")
        err = _first(flat, "error", "errorMessage")
        if err is not None:
            out["message"] = _text(err)
    elif etype == "error":
        out["message"] = _text(_first(flat, "message", "error", "content", "errorMessage"))
    else:
        usage = flat.get("usage")
        if not isinstance(usage, Mapping):
            usage = flat
        out["input_tokens"] = _first(usage, "input_tokens", "inputTokens", "prompt_tokens", "promptTokens")
        out["output_tokens"] = _first(usage, "output_tokens", "outputTokens", "completion_tokens",
                                      "completionTokens")
    return Event.model_validate({k: v for k, v in out.items() if v is not None})


def _first(d: Mapping[str, Any], *keys: str) -> Any:
    for k in keys:
        if d.get(k) is not None:
            return d[k]
    return None


def _str(value: Any) -> str | None:
    return None if value is None else str(value)


def _text(value: Any) -> str | None:
    """Message content as text; a list of content blocks is joined by their text parts."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = [b.get("text") if isinstance(b, Mapping) else b for b in value]
        return "".join(p for p in parts if isinstance(p, str))
    if isinstance(value, Mapping) and isinstance(value.get("text"), str):
        return value["text"]
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def _arguments(value: Any) -> dict[str, Any] | None:
    """Tool arguments as an object: JSON text is parsed; any other value is wrapped."""
    if value is None or isinstance(value, dict):
        return value
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, str):
        try:
            parsed = json.loads(value)
        except ValueError:
            return {"input": value}
        return parsed if isinstance(parsed, dict) else {"input": parsed}
    return {"input": value}


def _success(flat: Mapping[str, Any]) -> bool | None:
    for key in ("success", "ok"):
        if isinstance(flat.get(key), bool):
            return flat[key]
    for key in ("is_error", "isError"):
        if isinstance(flat.get(key), bool):
            return not flat[key]
    if flat.get("error") is not None:
        return False
    return None


def _name_results(events: list[Event]) -> None:
    names = {e.call_id: e.name for e in events if e.type == "tool_call" and e.call_id}
    for e in events:
        if e.type == "tool_result" and e.name is None and e.call_id in names:
            e.name = names[e.call_id]


def _short(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        err = exc.errors(include_url=False)[0]
        loc = ".".join(str(p) for p in err["loc"])
        return f"{loc}: {err['msg']}" if loc else err["msg"]
    return str(exc)


# ---- out: the shapes other tools read ------------------------------------------------------

_VALLY_DATA = {
    "tool_call": lambda e: {"toolName": e.name, "toolCallId": e.call_id, "arguments": e.arguments or {}},
    "tool_result": lambda e: {"toolName": e.name, "toolCallId": e.call_id, "success": e.success,
                              "result": e.result, "error": e.message},
    "assistant_message": lambda e: {"content": e.content},
    "user_message": lambda e: {"content": e.content},
    "error": lambda e: {"message": e.message},
    "token_usage": lambda e: {"inputTokens": e.input_tokens, "outputTokens": e.output_tokens},
}


def to_vally_events(events: list[Event]) -> list[dict[str, Any]]:
    """Events as Vally trajectory events ``{type, timestamp, data: {...camelCase}}``."""
    out = []
    for e in events:
        data = {k: v for k, v in _VALLY_DATA[e.type](e).items() if v is not None}
        out.append({"type": e.type, "timestamp": e.timestamp, "data": data})
    return out


_WAZA_ROLE = {"assistant_message": "assistant", "user_message": "user", "tool_call": "tool",
              "tool_result": "tool"}


def to_waza_transcript(events: list[Event]) -> list[dict[str, Any]]:
    """Events as waza transcript entries: assay's fields plus waza's ``role`` and, for tool
    calls, the legacy ``tool`` / ``args`` keys, so scripts written for either shape work."""
    out = []
    for e in events:
        entry = e.model_dump(exclude_none=True)
        role = _WAZA_ROLE.get(e.type)
        if role:
            entry["role"] = role
        if e.type == "tool_call":
            entry["tool"] = e.name
            entry["args"] = e.arguments or {}
        out.append(entry)
    return out


def waza_context(sample: Sample) -> dict[str, Any]:
    """The waza grading context, as waza's script graders read it on stdin and its assertions
    see it as names: ``task``, ``transcript``, ``output``, ``outcome``, ``duration_ms``,
    ``metadata``, plus ``tool_calls``, ``errors``, ``input``, ``expected``, ``workspace``."""
    transcript = to_waza_transcript(sample.transcript)
    return {
        "task": {"id": sample.id, "inputs": {"prompt": sample.input}, "expected": sample.expected,
                 "metadata": sample.metadata},
        "transcript": transcript,
        "tool_calls": [t for t in transcript if t["type"] == "tool_call"],
        "errors": [t for t in transcript if t["type"] == "error"],
        "output": sample.output if sample.output is not None else "",
        "outcome": sample.outcome or {},
        "duration_ms": sample.duration_ms or 0,
        "metadata": sample.metadata,
        "input": sample.input,
        "expected": sample.expected,
        "workspace": sample.workspace,
    }
