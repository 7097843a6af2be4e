"""What a span means: one span, or the spans of a trace or a conversation, as a ``Sample``.

- ``input``: the last user message's text; ``output``: the text the model answered; ``expected``:
  absent (production has no reference);
- ``metadata``: the span's attributes, ``model``, ``tokens`` (input, output), ``latency_ms``,
  the ids, and the messages as read (``messages.read_exchange``);
- ``transcript`` (every scope): the user message, the model's messages and tool calls, each
  tool span's call and result (``execute_tool`` spans, OpenInference ``TOOL`` spans) and the
  token usage, in the order the spans started, so tool-call, trajectory and metric graders grade it.

A span (or a trace) without any content yields None: "not applicable", never a failure.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from assay.core.sample import Event, Sample
from assay.service.online.messages import LlmExchange, Message, arguments, read_exchange

ERROR_STATUS = 2
"""OTLP's ``STATUS_CODE_ERROR``."""


class SpanLike(Protocol):
    trace_id: str
    span_id: str
    parent_span_id: str | None
    name: str
    start_ns: int
    end_ns: int
    status_code: int
    status_message: str | None
    attributes: dict[str, Any]
    events: list[dict[str, Any]]


def is_tool_span(span: SpanLike) -> bool:
    attributes = span.attributes
    return (attributes.get("gen_ai.operation.name") == "execute_tool"
            or str(attributes.get("openinference.span.kind", "")).upper() == "TOOL")


def span_sample(span: SpanLike) -> Sample | None:
    """One span as a sample; None when it carries no content."""
    exchange = read_exchange(span.attributes, span.events)
    if exchange is None:
        if is_tool_span(span) and _tool_events(span):
            return Sample(id=f"{span.trace_id}:{span.span_id}", input=_tool_arguments(span),
                          output=_tool_result(span), metadata=_metadata(span, None),
                          transcript=_tool_events(span), duration_ms=_latency(span))
        return None
    return Sample(id=f"{span.trace_id}:{span.span_id}", input=_last_user_text(exchange), output=_output_text(exchange),
                  metadata=_metadata(span, exchange), transcript=_exchange_events(span, exchange, with_input=True),
                  duration_ms=_latency(span))


def group_sample(sample_id: str, spans: Sequence[SpanLike]) -> Sample | None:
    """The spans of a trace or a conversation, as one sample: the first call's user message in,
    the last call's answer out, every call and tool in the transcript."""
    ordered = sorted(spans, key=lambda s: (s.start_ns, s.span_id))
    transcript: list[Event] = []
    first: LlmExchange | None = None
    last: LlmExchange | None = None
    called: set[str] = set()
    tools = 0
    for span in ordered:
        if is_tool_span(span):
            events = [e for e in _tool_events(span) if not (e.type == "tool_call" and e.call_id in called)]
            tools += bool(events)
            transcript += events
            continue
        exchange = read_exchange(span.attributes, span.events)
        if exchange is None:
            continue
        transcript += _exchange_events(span, exchange, with_input=first is None)
        called.update(c.call_id for m in exchange.output for c in m.tool_calls if c.call_id)
        first = first or exchange
        last = exchange
    if first is None and not tools:
        return None
    root = next((s for s in ordered if s.parent_span_id is None), ordered[0])
    duration = max(0.0, (max(s.end_ns for s in ordered) - min(s.start_ns for s in ordered)) / 1e6)
    metadata = _metadata(root, None) | {"spans": len(ordered), "traces": sorted({s.trace_id for s in ordered})}
    models = [model_of(s.attributes) for s in ordered if model_of(s.attributes)]
    if models:
        metadata["model"] = models[-1]
    metadata["tokens"] = _sum_tokens(ordered)
    return Sample(id=sample_id, input=_last_user_text(first) if first else None,
                  output=_output_text(last) if last else None, metadata=metadata, transcript=transcript,
                  duration_ms=duration)


def _latency(span: SpanLike) -> float:
    return max(0.0, (span.end_ns - span.start_ns) / 1e6)


def model_of(attributes: dict[str, Any]) -> str | None:
    for key in ("gen_ai.response.model", "gen_ai.request.model", "llm.model_name"):
        value = attributes.get(key)
        if value:
            return str(value)
    return None


def _tokens(attributes: dict[str, Any]) -> dict[str, int | None]:
    def first(*keys: str) -> int | None:
        for key in keys:
            value = attributes.get(key)
            if isinstance(value, int | float) and not isinstance(value, bool):
                return int(value)
        return None

    return {"input": first("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens", "llm.token_count.prompt"),
            "output": first("gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens",
                            "llm.token_count.completion")}


def _sum_tokens(spans: Sequence[SpanLike]) -> dict[str, int]:
    total = {"input": 0, "output": 0}
    for span in spans:
        if is_tool_span(span):
            continue
        for key, value in _tokens(span.attributes).items():
            total[key] += value or 0
    return total


def _metadata(span: SpanLike, exchange: LlmExchange | None) -> dict[str, Any]:
    out: dict[str, Any] = {"traceId": span.trace_id, "spanId": span.span_id, "name": span.name,
                           "model": model_of(span.attributes), "tokens": _tokens(span.attributes),
                           "latency_ms": _latency(span), "operation": span.attributes.get("gen_ai.operation.name"),
                           "attributes": span.attributes}
    if span.status_code == ERROR_STATUS:
        out["error"] = span.status_message or "error"
    if exchange is not None:
        out["messages"] = {"input": [_message_dict(m) for m in exchange.input],
                           "output": [_message_dict(m) for m in exchange.output]}
    return out


def _message_dict(message: Message) -> dict[str, Any]:
    out: dict[str, Any] = {"role": message.role, "content": message.text}
    if message.tool_calls:
        out["tool_calls"] = [{"name": c.name, "arguments": c.arguments, "id": c.call_id} for c in message.tool_calls]
    if message.tool_result is not None:
        out["tool_result"] = message.tool_result
    return out


def _last_user_text(exchange: LlmExchange) -> str | None:
    users = [m.text for m in exchange.input if m.role == "user" and m.text is not None]
    return users[-1] if users else None


def _output_text(exchange: LlmExchange) -> str | None:
    texts = [m.text for m in exchange.output if m.text is not None]
    return "\n".join(texts) if texts else None


def _exchange_events(span: SpanLike, exchange: LlmExchange, *, with_input: bool) -> list[Event]:
    when = span.start_ns / 1e9
    events: list[Event] = []
    if with_input:
        text = _last_user_text(exchange)
        if text is not None:
            events.append(Event(type="user_message", content=text, timestamp=when))
    for message in exchange.output:
        if message.text is not None:
            events.append(Event(type="assistant_message", content=message.text, timestamp=span.end_ns / 1e9))
        for call in message.tool_calls:
            events.append(Event(type="tool_call", name=call.name, arguments=call.arguments, call_id=call.call_id,
                                timestamp=span.end_ns / 1e9))
    tokens = _tokens(span.attributes)
    if tokens["input"] is not None or tokens["output"] is not None:
        events.append(Event(type="token_usage", input_tokens=tokens["input"], output_tokens=tokens["output"],
                            timestamp=span.end_ns / 1e9))
    if span.status_code == ERROR_STATUS:
        events.append(Event(type="error", message=span.status_message or span.name, timestamp=span.end_ns / 1e9))
    return events


def _tool_name(span: SpanLike) -> str:
    return str(span.attributes.get("gen_ai.tool.name") or span.attributes.get("tool.name") or span.name)


def _tool_arguments(span: SpanLike) -> dict[str, Any] | None:
    value = span.attributes.get("gen_ai.tool.call.arguments", span.attributes.get("tool.parameters"))
    if value is None and str(span.attributes.get("openinference.span.kind", "")).upper() == "TOOL":
        value = span.attributes.get("input.value")
    return arguments(value)


def _tool_result(span: SpanLike) -> Any:
    value = span.attributes.get("gen_ai.tool.call.result")
    if value is None and str(span.attributes.get("openinference.span.kind", "")).upper() == "TOOL":
        value = span.attributes.get("output.value")
    return value


def _tool_events(span: SpanLike) -> list[Event]:
    call_id = span.attributes.get("gen_ai.tool.call.id")
    call_id = None if call_id is None else str(call_id)
    failed = span.status_code == ERROR_STATUS
    return [Event(type="tool_call", name=_tool_name(span), arguments=_tool_arguments(span), call_id=call_id,
                  timestamp=span.start_ns / 1e9),
            Event(type="tool_result", name=_tool_name(span), call_id=call_id, success=not failed,
                  result=_tool_result(span) if not failed else (span.status_message or "error"),
                  timestamp=span.end_ns / 1e9)]
