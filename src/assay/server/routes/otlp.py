"""``POST /v1/traces``: OTLP/HTTP trace export, protobuf or JSON, gzip or not, with a bearer
token (the token's user owns the spans). Answers as OTLP asks: 200 with an
``ExportTraceServiceResponse`` (``partial_success`` counts the spans rejected), 400 for a
malformed request, 429 with ``Retry-After`` while the backlog is past its limit, 413/415 for a
body too large or of another type; a database away or too many requests waiting for it answer
503 with ``Retry-After`` (``server.admission``). Every refusal is said as the API says it and
made a ``google.rpc.Status`` in the request's encoding on its way out (``server.otlp_status``).
Everything else happens in ``service.online.intake``."""

from __future__ import annotations

import zlib

from fastapi import APIRouter, Request
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from assay.core.messages import Phrase
from assay.server.deps import CurrentUser, ServiceDep
from assay.server.errors import error_response
from assay.service.online.intake import Backlogged
from assay.service.online.otlp import JSON, PROTOBUF, OtlpError, answer, media_type

router = APIRouter(tags=["online"])
RETRY_AFTER_S = 5
BACKLOG = Phrase("otlp.backlog", "the backlog is full ({limit} spans and jobs waiting to be planned or graded): "
                 "retry in {seconds} s")
TYPE = Phrase("otlp.type", "Content-Type {type} is not accepted: send application/x-protobuf or application/json")
ENCODING = Phrase("otlp.encoding", "Content-Encoding {encoding} is not accepted: send gzip or no encoding")
TOO_LARGE = Phrase("otlp.too_large", "the request inflates to more than {limit} bytes: send smaller batches")
BAD_GZIP = Phrase("otlp.bad_gzip", "the body is not valid gzip: {problem}")
REJECTED = Phrase("otlp.rejected", "{count} span(s) rejected: {problems}")


@router.post("/v1/traces", summary="Receive spans (OTLP/HTTP)", response_class=Response,
             responses={200: {"content": {PROTOBUF: {}, JSON: {}}}})
async def export_traces(request: Request, service: ServiceDep, user: CurrentUser) -> Response:
    content_type = request.headers.get("content-type", "")
    kind = media_type(content_type)
    if kind not in (PROTOBUF, JSON):
        return error_response(415, TYPE(type=repr(content_type[:80])))
    body = await request.body()
    encoding = request.headers.get("content-encoding", "identity").strip().lower()
    limit = service.settings.otlp_max_body_bytes
    if encoding == "gzip":
        inflated = _gunzip(body, limit)
        if isinstance(inflated, str):
            return error_response(400, inflated)
        if inflated is None:
            return error_response(413, TOO_LARGE(limit=f"{limit:,}"))
        body = inflated
    elif encoding not in ("", "identity"):
        return error_response(415, ENCODING(encoding=repr(encoding[:40])))
    try:
        outcome = await run_in_threadpool(service.intake.accept, user.id, body, kind)
    except Backlogged as exc:
        return error_response(429, BACKLOG(limit=f"{exc.limit:,}", seconds=RETRY_AFTER_S),
                              headers={"Retry-After": str(RETRY_AFTER_S)})
    except OtlpError as exc:
        return error_response(400, str(exc))
    if outcome.stored:
        service.online.arrived()
    message: str = REJECTED(count=outcome.rejected, problems="; ".join(outcome.problems)) if outcome.rejected else ""
    return Response(answer(outcome.rejected, message, kind), media_type=kind)


def _gunzip(body: bytes, limit: int) -> bytes | str | None:
    """The inflated body; None past ``limit`` bytes (never inflated further); a message when not gzip."""
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        out = inflater.decompress(body, limit + 1)
    except zlib.error as exc:
        return BAD_GZIP(problem=str(exc))
    if len(out) > limit or inflater.unconsumed_tail:
        return None
    if not inflater.eof:
        return BAD_GZIP(problem="the stream ends early")
    return out
