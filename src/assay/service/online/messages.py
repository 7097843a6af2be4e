"""The messages of an LLM call, read from a span in whichever shape its instrumentation wrote:

- the current GenAI conventions: ``gen_ai.input.messages``, ``gen_ai.output.messages`` (JSON
  text or structured values: ``[{role, parts: [{type: text|tool_call|tool_call_response, ...}]}]``)
  and ``gen_ai.system_instructions``;
- the older event-based conventions: span events ``gen_ai.{system,user,assistant,tool}.message``
  and ``gen_ai.choice`` (``content`` or a ``message`` object), and the flattened
  ``gen_ai.prompt.N.*`` / ``gen_ai.completion.N.*`` attributes;
- OpenInference: ``llm.input_messages.N.message.*``, ``llm.output_messages.N.message.*``,
  then ``input.value`` / ``output.value``.

Each message comes out as ``Message(role, text, tool_calls)``; None when the span carries no
content at all (content capture is opt-in in every one of these conventions).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class SpanToolCall:
    name: str
    arguments: dict[str, Any] | None = None
    call_id: str | None = None


@dataclass(slots=True)
class Message:
    role: str
    text: str | None = None
    tool_calls: list[SpanToolCall] = field(default_factory=list)
    tool_result: Any = None
    call_id: str | None = None


@dataclass(slots=True)
class LlmExchange:
    """An LLM call's messages: what went in (system instructions first) and what came out."""

    input: list[Message]
    output: list[Message]


def read_exchange(attributes: dict[str, Any], events: list[dict[str, Any]]) -> LlmExchange | None:
    """The call's messages, from the first shape that has any; None when none has content."""
    for reader in (_current, _events, _flattened_openllmetry, _openinference):
        exchange = reader(attributes, events)
        if exchange is not None and (exchange.input or exchange.output):
            return exchange
    return None


def _json(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def arguments(value: Any) -> dict[str, Any] | None:
    value = _json(value)
    if isinstance(value, dict):
        return value
    return None if value in (None, "") else {"value": value}


def _current(attributes: dict[str, Any], _events: list[dict[str, Any]]) -> LlmExchange | None:
    keys = ("gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions")
    if not any(k in attributes for k in keys):
        return None
    system = _json(attributes.get("gen_ai.system_instructions"))
    inputs: list[Message] = []
    if isinstance(system, list):
        text = _parts_text(system)
        if text:
            inputs.append(Message("system", text))
    elif isinstance(system, str) and system:
        inputs.append(Message("system", system))
    inputs += _conventional_messages(_json(attributes.get("gen_ai.input.messages")))
    return LlmExchange(inputs, _conventional_messages(_json(attributes.get("gen_ai.output.messages"))))


def _parts_text(parts: list[Any]) -> str | None:
    texts = [str(p.get("content")) for p in parts if isinstance(p, dict) and p.get("type", "text") == "text"
             and p.get("content") is not None]
    return "\n".join(texts) if texts else None


def _conventional_messages(value: Any) -> list[Message]:
    out: list[Message] = []
    for entry in value if isinstance(value, list) else []:
        if not isinstance(entry, dict):
            continue
        parts: list[Any] = entry["parts"] if isinstance(entry.get("parts"), list) else []
        message = Message(str(entry.get("role") or "assistant"), _parts_text(parts))
        for part in parts:
            if not isinstance(part, dict):
                continue
            if part.get("type") == "tool_call":
                message.tool_calls.append(SpanToolCall(str(part.get("name") or ""), arguments(part.get("arguments")),
                                                   _id(part.get("id"))))
            elif part.get("type") == "tool_call_response":
                message.tool_result, message.call_id = part.get("response"), _id(part.get("id"))
        out.append(message)
    return out


def _id(value: Any) -> str | None:
    return None if value is None else str(value)


_EVENT_ROLES = {"gen_ai.system.message": "system", "gen_ai.user.message": "user",
                "gen_ai.assistant.message": "assistant", "gen_ai.tool.message": "tool"}


def _events(_attributes: dict[str, Any], events: list[dict[str, Any]]) -> LlmExchange | None:
    inputs: list[Message] = []
    outputs: list[Message] = []
    for event in events:
        name = event.get("name")
        attrs = event.get("attributes") or {}
        if name in _EVENT_ROLES:
            message = _event_message(_EVENT_ROLES[name], attrs)
            if message is not None:
                inputs.append(message)
        elif name == "gen_ai.choice":
            body = _json(attrs.get("message"))
            message = _event_message("assistant", body if isinstance(body, dict) else attrs)
            if message is not None:
                outputs.append(message)
    return LlmExchange(inputs, outputs) if inputs or outputs else None


def _event_message(role: str, attrs: dict[str, Any]) -> Message | None:
    content = _json(attrs.get("content"))
    text = content if isinstance(content, str) else _parts_text(content) if isinstance(content, list) else None
    message = Message(str(attrs.get("role") or role), text)
    calls = _json(attrs.get("tool_calls"))
    for call in calls if isinstance(calls, list) else []:
        if isinstance(call, dict):
            function: dict[str, Any] = call["function"] if isinstance(call.get("function"), dict) else call
            name = str(function.get("name") or "")
            message.tool_calls.append(SpanToolCall(name, arguments(function.get("arguments")), _id(call.get("id"))))
    if role == "tool":
        message.tool_result, message.call_id = content, _id(attrs.get("id"))
    if text is None and not message.tool_calls and message.tool_result is None:
        return None
    return message


_INDEXED = re.compile(r"^(?P<prefix>.+?)\.(?P<n>\d+)\.(?P<rest>.+)$")


def _indexed(attributes: dict[str, Any], prefix: str) -> list[dict[str, Any]]:
    """``prefix.N.rest = value`` attributes as a list of ``{rest: value}``, by N."""
    found: dict[int, dict[str, Any]] = {}
    for key, value in attributes.items():
        if not key.startswith(prefix + "."):
            continue
        match = _INDEXED.match(key)
        if match and match["prefix"] == prefix:
            found.setdefault(int(match["n"]), {})[match["rest"]] = value
    return [found[n] for n in sorted(found)]


def _flattened_openllmetry(attributes: dict[str, Any], _events: list[dict[str, Any]]) -> LlmExchange | None:
    prompts = _indexed(attributes, "gen_ai.prompt")
    completions = _indexed(attributes, "gen_ai.completion")
    if not prompts and not completions:
        return None
    inputs = [Message(str(p.get("role") or "user"), _text_or_none(p.get("content"))) for p in prompts]
    outputs = [Message(str(c.get("role") or "assistant"), _text_or_none(c.get("content"))) for c in completions]
    return LlmExchange(inputs, outputs)


def _text_or_none(value: Any) -> str | None:
    return None if value is None else value if isinstance(value, str) else json.dumps(value)


def _openinference(attributes: dict[str, Any], _events: list[dict[str, Any]]) -> LlmExchange | None:
    inputs = _openinference_messages(_indexed(attributes, "llm.input_messages"))
    outputs = _openinference_messages(_indexed(attributes, "llm.output_messages"))
    if not inputs and "input.value" in attributes:
        inputs = [Message("user", _text_or_none(attributes["input.value"]))]
    if not outputs and "output.value" in attributes:
        outputs = [Message("assistant", _text_or_none(attributes["output.value"]))]
    return LlmExchange(inputs, outputs) if inputs or outputs else None


def _openinference_messages(entries: list[dict[str, Any]]) -> list[Message]:
    out: list[Message] = []
    for entry in entries:
        message = Message(str(entry.get("message.role") or "user"), _text_or_none(entry.get("message.content")))
        calls = _indexed(entry, "message.tool_calls")
        for call in calls:
            message.tool_calls.append(SpanToolCall(str(call.get("tool_call.function.name") or ""),
                                               arguments(call.get("tool_call.function.arguments")),
                                               _id(call.get("tool_call.id"))))
        out.append(message)
    return out
