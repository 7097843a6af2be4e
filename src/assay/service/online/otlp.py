"""Reading an OTLP/HTTP trace export (``ExportTraceServiceRequest``), as protobuf or as OTLP's
JSON mapping, into plain span records (``SpanRecord``), and writing its answer.

The messages come from ``opentelemetry-proto`` (the ``assay[otel]`` extra). OTLP's JSON differs
from protobuf's canonical JSON in one way that matters: trace and span ids are hex, not base64;
they are turned into base64 before the JSON is read into the message, so both encodings go
through one path. Unknown fields are ignored, as OTLP asks of a receiver.

A span that cannot be stored (an id of the wrong length or all zeros) is rejected alone and
counted in the answer's ``partial_success``; the others are kept. An attribute's text longer
than ``max_value_chars`` is cut there and the attribute's key is listed in
``assay.truncated`` (a span keeps at most ``max_attributes`` attributes; the rest are dropped
and counted in ``assay.dropped_attributes``).
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from typing import Any

from assay.core.errors import AssayError
from assay.core.messages import Phrase

try:  # the assay[otel] extra
    from google.protobuf.json_format import ParseDict, ParseError
    from google.protobuf.message import DecodeError
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
        ExportTraceServiceResponse,
    )

    _INSTALLED = True
except ImportError:  # pragma: no cover - reported by ``available``
    _INSTALLED = False

PROTOBUF = "application/x-protobuf"
JSON = "application/json"
NOT_INSTALLED = Phrase("otlp.not_installed", "OTLP intake needs the assay[otel] extra: pip install 'assay[otel]'")
BAD_PROTOBUF = Phrase("otlp.bad_protobuf", "the body is not an OTLP ExportTraceServiceRequest in protobuf: {problem}")
BAD_JSON = Phrase("otlp.bad_json", "the body is not an OTLP ExportTraceServiceRequest in JSON: {problem}")
BAD_ID = Phrase("otlp.bad_id", "resourceSpans[{r}].scopeSpans[{s}].spans[{i}].{field}: {problem}")


class OtlpError(AssayError, ValueError):
    """The whole request is malformed (400)."""


@dataclass(slots=True)
class SpanRecord:
    """One span as stored: ids in lowercase hex, times in Unix nanoseconds."""

    trace_id: str
    span_id: str
    parent_span_id: str | None
    name: str
    kind: int
    start_ns: int
    end_ns: int
    status_code: int
    status_message: str | None
    attributes: dict[str, Any]
    events: list[dict[str, Any]]
    resource: dict[str, Any]
    conversation_id: str | None = None


@dataclass(slots=True)
class Decoded:
    spans: list[SpanRecord] = field(default_factory=list)
    rejected: int = 0
    problems: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Caps:
    """What one span may hold."""

    max_attributes: int = 256
    max_value_chars: int = 256 * 1024
    max_events: int = 128
    max_id_chars: int = 200


def available() -> bool:
    return _INSTALLED


def media_type(content_type: str) -> str:
    return content_type.split(";", 1)[0].strip().lower()


def decode(body: bytes, content_type: str, caps: Caps = Caps()) -> Decoded:
    """The spans of an export request. Raises OtlpError for a body that is no such request."""
    if not available():
        raise OtlpError(NOT_INSTALLED())
    request = ExportTraceServiceRequest()
    if media_type(content_type) == JSON:
        try:
            document = json.loads(body)
            _hex_ids_to_base64(document)
            ParseDict(document, request, ignore_unknown_fields=True)
        except (ValueError, ParseError, TypeError, RecursionError) as exc:
            raise OtlpError(BAD_JSON(problem=_short(exc))) from None
    else:
        try:
            request.ParseFromString(body)
        except (DecodeError, RecursionError) as exc:
            raise OtlpError(BAD_PROTOBUF(problem=_short(exc))) from None
    return _records(request, caps)


def answer(rejected: int, message: str, content_type: str) -> bytes:
    """The success answer: an ``ExportTraceServiceResponse`` with ``partial_success`` when some
    spans were rejected, in the request's encoding."""
    if media_type(content_type) == JSON:
        if not rejected:
            return b"{}"
        return json.dumps({"partialSuccess": {"rejectedSpans": str(rejected), "errorMessage": message}}).encode()
    response = ExportTraceServiceResponse()
    if rejected:
        response.partial_success.rejected_spans = rejected
        response.partial_success.error_message = message
    return bytes(response.SerializeToString())


def status_body(code: int, message: str, content_type: str) -> bytes:
    """A ``google.rpc.Status`` (``code``, ``message``) in the request's encoding, as OTLP answers
    errors. Its two fields are written by hand: the message type is not in opentelemetry-proto."""
    if media_type(content_type) == JSON:
        return json.dumps({"code": code, "message": message}).encode()
    text = message.encode()
    return b"\x08" + _varint(code) + b"\x12" + _varint(len(text)) + text


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _short(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text if len(text) <= 300 else text[:300] + "..."


_ID_FIELDS = ("traceId", "spanId", "parentSpanId", "trace_id", "span_id", "parent_span_id")


def _hex_ids_to_base64(document: Any) -> None:
    """OTLP JSON writes ids in hex; protobuf's JSON reads bytes as base64."""
    if not isinstance(document, dict):
        raise OtlpError(BAD_JSON(problem="the body must be a JSON object"))
    for resource_spans in _list(document.get("resourceSpans", document.get("resource_spans"))):
        for scope_spans in _list(_dict(resource_spans).get("scopeSpans", _dict(resource_spans).get("scope_spans"))):
            for span in _list(_dict(scope_spans).get("spans")):
                for item in [span, *_list(_dict(span).get("links"))]:
                    if not isinstance(item, dict):
                        continue
                    for key in _ID_FIELDS:
                        value = item.get(key)
                        if isinstance(value, str):
                            try:
                                item[key] = base64.b64encode(bytes.fromhex(value)).decode()
                            except ValueError:
                                item[key] = "!"  # not hex: the span is rejected alone (_records)


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _records(request: Any, caps: Caps) -> Decoded:
    out = Decoded()
    for r, resource_spans in enumerate(request.resource_spans):
        resource = _attributes(resource_spans.resource.attributes, caps)
        for s, scope_spans in enumerate(resource_spans.scope_spans):
            for i, span in enumerate(scope_spans.spans):
                problem = _id_problem(span.trace_id, 16, "traceId") or _id_problem(span.span_id, 8, "spanId")
                if problem is None and span.parent_span_id and len(span.parent_span_id) != 8:
                    problem = "parentSpanId", "must be 8 bytes (16 hex digits) or empty"
                if problem is None:
                    problem = _time_problem(span)
                if problem is not None:
                    out.rejected += 1
                    if len(out.problems) < 5:
                        out.problems.append(BAD_ID(r=r, s=s, i=i, field=problem[0], problem=problem[1]))
                    continue
                attributes = _attributes(span.attributes, caps)
                conversation = attributes.get("gen_ai.conversation.id", attributes.get("session.id"))
                conversation_id = str(conversation)[:caps.max_id_chars] if conversation not in (None, "") else None
                events = [{"name": e.name[:caps.max_id_chars], "timeUnixNano": e.time_unix_nano,
                           "attributes": _attributes(e.attributes, caps)} for e in span.events[:caps.max_events]]
                out.spans.append(SpanRecord(
                    trace_id=span.trace_id.hex(), span_id=span.span_id.hex(),
                    parent_span_id=span.parent_span_id.hex() or None, name=span.name[:caps.max_value_chars],
                    kind=int(span.kind), start_ns=int(span.start_time_unix_nano), end_ns=int(span.end_time_unix_nano),
                    status_code=int(span.status.code), status_message=span.status.message or None,
                    attributes=attributes, events=events, resource=resource, conversation_id=conversation_id))
    return out


MAX_TIME_NS = (1 << 63) - 1
"""The latest time a span may have: a signed 64-bit count of nanoseconds (2262-04-11), as the
databases store it. OTLP's fields are unsigned, so a sender can write later ones."""


def _time_problem(span: Any) -> tuple[str, str] | None:
    for name in ("start_time_unix_nano", "end_time_unix_nano"):
        if getattr(span, name) > MAX_TIME_NS:
            return _camel(name), f"{getattr(span, name)} is past 2262-04-11 ({MAX_TIME_NS} ns), the latest time stored"
    return None


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _id_problem(value: bytes, size: int, name: str) -> tuple[str, str] | None:
    if len(value) != size:
        return name, f"must be {size} bytes ({size * 2} hex digits), got {len(value)}"
    if not any(value):
        return name, "must not be all zeros"
    return None


def _attributes(pairs: Any, caps: Caps) -> dict[str, Any]:
    out: dict[str, Any] = {}
    truncated: list[str] = []
    for n, pair in enumerate(pairs):
        if n >= caps.max_attributes:
            out["assay.dropped_attributes"] = len(pairs) - caps.max_attributes
            break
        key = pair.key[:caps.max_id_chars]
        value, cut = _value(pair.value, caps.max_value_chars)
        out[key] = value
        if cut:
            truncated.append(key)
    if truncated:
        out["assay.truncated"] = truncated
    return out


def _value(value: Any, limit: int) -> tuple[Any, bool]:
    """A JSON value of an ``AnyValue``, and whether text in it was cut at ``limit`` characters."""
    which = value.WhichOneof("value")
    if which == "string_value":
        text = value.string_value
        return (text[:limit], True) if len(text) > limit else (text, False)
    if which in ("bool_value", "int_value", "double_value"):
        return getattr(value, which), False
    if which == "bytes_value":
        return base64.b64encode(value.bytes_value[:limit]).decode(), len(value.bytes_value) > limit
    if which == "array_value":
        items = [_value(v, limit) for v in value.array_value.values]
        return [v for v, _ in items], any(c for _, c in items)
    if which == "kvlist_value":
        pairs = {kv.key: _value(kv.value, limit) for kv in value.kvlist_value.values}
        return {k: v for k, (v, _) in pairs.items()}, any(c for _, c in pairs.values())
    return None, False


__all__ = ["Caps", "Decoded", "OtlpError", "SpanRecord", "answer", "available", "decode",
           "status_body"]
