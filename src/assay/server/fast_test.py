"""The service's hot request answered before the framework: ``POST /api/v1/evaluators/{id}/test``
on a cached evaluator with a cached token.

``FastTest`` is the outermost ASGI layer of the app. It takes the request only when every
condition of the route's happy path already holds without I/O: one ``Authorization: Bearer``
header whose token the token cache knows as live, the evaluator's grader in this process's
cache, a JSON body (no ``Content-Encoding``) within the body limit that is strict JSON and
that ``TestRequest`` accepts, and a grade ``Grading.runs_inline`` allows on the event loop.
Then it grades and answers with ``server.trial``, the route's own code, so the bytes are the
route's. In every other case it hands the request on unchanged, the body it has read replayed
through ``receive``: the app's middlewares and the route give every error, 401 to 422, as
before, and the route stays what the OpenAPI document describes.

Skipped for this request: routing, dependency solving, the body and cookie middlewares and
the exception middleware, which together cost more than the grading itself.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import ValidationError
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from assay._asgi_body import read_messages, replay
from assay.core.grader import Grader
from assay.core.strict_json import StrictJsonError, loads_strict
from assay.server import trial
from assay.server.errors import ApiError
from assay.server.schemas.evaluators import TestRequest
from assay.server.service import Service

_BEARER = re.compile(rb"[Bb][Ee][Aa][Rr][Ee][Rr] ([!-~]+)")
"""A token of visible ASCII after one space: what the framework's ``HTTPBearer`` reads the same."""
_JSON_TYPES = frozenset({b"application/json", b"application/json; charset=utf-8", b"application/json;charset=utf-8"})
_HEADERS = frozenset({b"authorization", b"content-type", b"content-length", b"content-encoding"})


class FastTest:
    """Answers ``POST {prefix}/evaluators/{id}/test`` itself when it can do so without I/O;
    passes everything else to ``app`` untouched (the read body replayed)."""

    def __init__(self, app: ASGIApp, service: Service, prefix: str, max_body_bytes: int) -> None:
        self.app = app
        self.service = service
        self.path = re.compile(re.escape(prefix) + r"/evaluators/([^/]+)/test")
        self.max_body_bytes = max_body_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or scope.get("root_path") \
                or scope.get("query_string"):
            await self.app(scope, receive, send)
            return
        match = self.path.fullmatch(scope["path"])
        grader = None if match is None else self._grader(scope, match[1])
        if grader is None:
            await self.app(scope, receive, send)
            return
        messages, body = await read_messages(receive, self.max_body_bytes)
        response = self._answer(grader, body) if isinstance(body, bytes) else None
        if response is None:
            await self.app(scope, replay(messages, receive), send)
            return
        await response(scope, receive, send)

    def _grader(self, scope: Scope, evaluator_id: str) -> Grader[Any] | None:
        """The cached grader when the headers are those of the happy path (a live cached token,
        a JSON body of an acceptable declared size, or a chunked one); None otherwise."""
        headers: dict[bytes, bytes] = {}
        for name, value in scope["headers"]:
            name = name.lower()
            if name in _HEADERS:
                if name in headers:  # given twice: the framework's reading is the one that counts
                    return None
                headers[name] = value
        if b"content-encoding" in headers or headers.get(b"content-type", b"").lower() not in _JSON_TYPES:
            return None
        length = headers.get(b"content-length")
        if length is not None and not (length.isdigit() and int(length) <= self.max_body_bytes):
            return None
        bearer = _BEARER.fullmatch(headers.get(b"authorization", b""))
        if bearer is None:
            return None
        known, principal = self.service.tokens.cached(bearer[1].decode("ascii"))
        if not known or principal is None:
            return None
        return self.service.grading.cached(evaluator_id)

    def _answer(self, grader: Grader[Any], body: bytes) -> Response | None:
        """The route's response for ``body``, or None when the route must give it (an invalid
        body, a grade that cannot run inline, an evaluator that could not run)."""
        try:
            request = TestRequest.model_validate(loads_strict(body))
        except (StrictJsonError, ValidationError):
            return None
        grading = self.service.grading
        result = trial.grade_inline(grading, grader, trial.sample_of(request))
        if result is None:
            return None
        try:
            return trial.answer(result)
        except ApiError:
            return None
