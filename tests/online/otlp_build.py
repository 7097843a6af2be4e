"""Building OTLP export requests in tests, with opentelemetry-proto's own messages."""

from __future__ import annotations

import json
import os
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest
from opentelemetry.proto.common.v1.common_pb2 import AnyValue, KeyValue
from opentelemetry.proto.trace.v1.trace_pb2 import Span

NOW_NS = 1_780_000_000 * 10**9


def new_trace_id() -> bytes:
    return os.urandom(16)


def any_value(value: Any) -> AnyValue:
    if isinstance(value, bool):
        return AnyValue(bool_value=value)
    if isinstance(value, int):
        return AnyValue(int_value=value)
    if isinstance(value, float):
        return AnyValue(double_value=value)
    return AnyValue(string_value=value if isinstance(value, str) else json.dumps(value))


def span(trace_id: bytes, span_id: bytes, name: str, attributes: dict[str, Any], *, parent: bytes = b"",
         start_ns: int = NOW_NS, duration_ns: int = 250_000_000, status: int = 0) -> Span:
    out = Span(trace_id=trace_id, span_id=span_id, parent_span_id=parent, name=name, kind=Span.SPAN_KIND_CLIENT,
               start_time_unix_nano=start_ns, end_time_unix_nano=start_ns + duration_ns)
    out.attributes.extend(KeyValue(key=k, value=any_value(v)) for k, v in attributes.items())
    out.status.code = status
    return out


def request(*spans: Span, service: str = "shop") -> ExportTraceServiceRequest:
    message = ExportTraceServiceRequest()
    resource_spans = message.resource_spans.add()
    resource_spans.resource.attributes.append(KeyValue(key="service.name", value=AnyValue(string_value=service)))
    resource_spans.scope_spans.add().spans.extend(spans)
    return message


def chat_attributes(question: str, answer: str, model: str = "gpt-4o") -> dict[str, Any]:
    """A chat span's attributes under the current GenAI conventions, content captured."""
    return {"gen_ai.operation.name": "chat", "gen_ai.request.model": model, "gen_ai.usage.input_tokens": 12,
            "gen_ai.usage.output_tokens": 5,
            "gen_ai.input.messages": json.dumps([{"role": "user", "parts": [{"type": "text", "content": question}]}]),
            "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [{"type": "text", "content": answer}],
                                                   "finish_reason": "stop"}])}
