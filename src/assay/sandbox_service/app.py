"""The sandbox service's routes (shapes in ``assay.sandbox.remote.wire``): thin, each parses its
body, then hands the work to the sandbox through the bounded queue. Plain Starlette (the
framework under FastAPI): the bodies are parsed here, and FastAPI's start-up (0.4 s more of
imports) and OpenAPI would buy nothing for five internal routes.

Request problems answer in the spec's error shape ``{success: false, error}`` with an HTTP
status (400 malformed, 401 secret, 413 too large, 503 queue full); an evaluator that fails is
a 200 answer with ``success: false`` and an ``errorCode``, as a grader's error result.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

import orjson
from pydantic import ValidationError
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from assay.core.context import DEFAULT_CODE_TIMEOUT_MAX_MS
from assay.core.errors import SpecError
from assay.core.interfaces import CodeCall, CodeRunner
from assay.core.result import ErrorCode
from assay.core.strict_json import StrictJsonError, loads_strict
from assay.sandbox.remote.wire import (
    BatchRequest,
    CallRequest,
    CheckRequest,
    CodeBody,
    ExecuteRequest,
    extras,
    failure,
)
from assay.sandbox_service.admission import RETRY_AFTER_S, Admission, QueueFull
from assay.sandbox_service.evaluate import SpecEvaluator
from assay.sandbox_service.guard import ASGIApp, Guard

M = TypeVar("M", bound=CodeBody)
_HTTP_CODES = {404: "not_found", 405: "method_not_allowed"}


@dataclass(frozen=True, slots=True)
class ServiceOptions:
    """How one sandbox service runs. ``secret`` None admits every caller (``--insecure-no-secret``)."""

    secret: str | None
    workers: int
    queue: int = 64
    max_body_bytes: int = 4 << 20
    max_code_bytes: int = 64 << 10
    max_batch: int = 1000
    timeout_max_ms: int = DEFAULT_CODE_TIMEOUT_MAX_MS


class _Refused(Exception):
    """A request that is answered with an HTTP error rather than run."""

    def __init__(self, status: int, message: str, code: str = str(ErrorCode.INVALID_CONFIG)) -> None:
        super().__init__(message)
        self.status, self.message, self.code = status, message, code


def create_app(options: ServiceOptions, runner: CodeRunner, report: dict[str, Any]) -> ASGIApp:
    """The service as an ASGI app. ``runner`` runs the code (the caller owns and closes it);
    ``report`` is ``sandbox.doctor.diagnose()``'s, taken once at start-up, for ``/health``."""
    admission = Admission(options.workers, options.queue)
    evaluator = SpecEvaluator(runner, options.timeout_max_ms)
    health = _health_report(report)

    async def admitted(job: Callable[..., Any], *args: Any) -> Response:
        try:
            return _json(200, await admission.run(job, *args))
        except QueueFull:
            return _json(503, {"success": False, "error": "the sandbox queue is full: retry later",
                               "errorCode": str(ErrorCode.UNAVAILABLE)}, {"retry-after": str(RETRY_AFTER_S)})

    async def execute(request: Request) -> Response:
        """The product spec's endpoint: one evaluator, one input."""
        body = await _parse(request, ExecuteRequest, options)

        def job() -> dict[str, Any]:
            spec = evaluator.compile(body.language, body.code, body.timeout)
            return spec if isinstance(spec, dict) else evaluator.execute(spec, body.input)

        return await admitted(job)

    async def execute_batch(request: Request) -> Response:
        """assay's extension: one evaluator, many inputs, answers in order."""
        body = await _parse(request, BatchRequest, options)
        if len(body.inputs) > options.max_batch:
            raise _Refused(413, f"{len(body.inputs)} inputs; this service takes at most {options.max_batch} a batch")

        def job() -> dict[str, Any]:
            spec = evaluator.compile(body.language, body.code, body.timeout)
            if isinstance(spec, dict):
                return {"success": True, "results": [spec] * len(body.inputs)}
            return {"success": True, "results": evaluator.execute_many(spec, body.inputs, body.spread)}

        return await admitted(job)

    async def call(request: Request) -> Response:
        """assay's extension: any ``CodeCall`` (waza assertions call ``check``)."""
        body = await _parse(request, CallRequest, options)
        if body.timeout > options.timeout_max_ms:
            raise _Refused(400, f"timeout: at most {options.timeout_max_ms} ms on this service")

        def job() -> dict[str, Any]:
            outcome = runner.call(CodeCall(body.language, body.code, body.args, body.function, body.timeout,
                                           body.memory_mb))
            return {"success": True, "value": outcome.value, **extras(outcome)} if outcome.ok else failure(outcome)

        return await admitted(job)

    async def check(request: Request) -> Response:
        """assay's extension: does the code compile and define the function? (``problem`` null if so)"""
        body = await _parse(request, CheckRequest, options)
        return await admitted(lambda: {"problem": runner.check(body.language, body.code, body.function)})

    async def get_health(_: Request) -> Response:
        """The isolation layers in force and the queue's occupancy; open to every caller."""
        return _json(200, {**health, "pool": admission.occupancy()})

    async def refused(_: Request, exc: Exception) -> Response:
        headers = None
        if isinstance(exc, _Refused):
            status, message, code = exc.status, exc.message, exc.code
        elif isinstance(exc, HTTPException):  # no such route, or a method it does not take
            status, message, headers = exc.status_code, str(exc.detail), exc.headers
            code = _HTTP_CODES.get(status, "bad_request")
        else:
            status, message, code = 500, "internal error", str(ErrorCode.UNAVAILABLE)
        return _json(status, {"success": False, "error": message, "errorCode": code}, headers)

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        yield
        admission.close()

    routes = [Route("/execute", execute, methods=["POST"]), Route("/execute/batch", execute_batch, methods=["POST"]),
              Route("/call", call, methods=["POST"]), Route("/check", check, methods=["POST"]),
              Route("/health", get_health, methods=["GET"])]
    handlers = {_Refused: refused, HTTPException: refused, Exception: refused}
    app = Starlette(routes=routes, exception_handlers=handlers, lifespan=lifespan)
    return Guard(app, secret=options.secret, max_body=options.max_body_bytes)


async def _parse(request: Request, model: type[M], options: ServiceOptions) -> M:
    """The body as ``model``, or ``_Refused`` naming the field that is wrong."""
    try:
        body = model.model_validate(loads_strict(await request.body()))
    except StrictJsonError as exc:
        raise _Refused(400, f"the body is not JSON: {exc}") from None
    except ValidationError as exc:
        raise _Refused(400, SpecError.from_validation(exc).message) from None
    code_bytes = len(body.code.encode("utf-8", "surrogatepass"))
    if code_bytes > options.max_code_bytes:
        raise _Refused(413, f"code is {code_bytes} bytes; this service takes at most {options.max_code_bytes}",
                       "too_large")
    return body


def _health_report(report: dict[str, Any]) -> dict[str, Any]:
    layers = {name: bool(info.get("available")) for name, info in report.get("layers", {}).items()}
    languages = {lang: {"canRun": bool(info.get("can_run")), "detail": info.get("detail")}
                 for lang, info in ((lang, report.get(lang, {})) for lang in ("python", "nodejs"))}
    status = "ok" if languages["python"]["canRun"] else "degraded"
    return {"status": status, "layers": layers, **languages, "weakMode": bool(report.get("weak_mode"))}


def _json(status: int, body: dict[str, Any], headers: Mapping[str, str] | None = None) -> Response:
    return Response(orjson.dumps(body), status_code=status, media_type="application/json", headers=headers)
