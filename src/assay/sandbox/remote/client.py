"""``RemoteCodeRunner``: the ``CodeRunner`` that runs code in the sandbox service over HTTP.

Chosen by ``runner.resources`` when ``SANDBOX_URL`` is set. One instance is shared by a whole
process: its HTTP client keeps connections alive and is safe to use from many threads.
Nothing here raises: a service that cannot be reached, refuses the secret or fails answers
``unavailable`` (never a failed grade), and a request it rejects answers ``invalid_config``.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import orjson

from assay.core.context import Language
from assay.core.interfaces import CodeBatch, CodeCall, CodeOutcome
from assay.core.messages import Phrase, Said
from assay.core.result import ErrorCode
from assay.core.source import check_python_source
from assay.sandbox.remote._http import Connections, HttpError, Reply
from assay.sandbox.remote.wire import OUT_OF_PROTOCOL, SPEC_MEMORY_MB, outcome_from

DEADLINE_MARGIN_S = 2.5
"""Added to an evaluation's own timeout: the service's Node watchdog may take the timeout plus 2 s."""
CHECK_DEADLINE_S = 5.0
BATCH_INPUTS = 256
"""Inputs per ``/execute/batch`` request (the service's default ceiling is 1,000)."""
CONNECT_TIMEOUT_S = 2.0
_BUSY_BACKOFF_S = (0.02, 0.05, 0.1, 0.2, 0.5)
UNAVAILABLE = Phrase("sandbox.remote.unavailable", "the sandbox service at {url} {what}")
NO_ANSWER = Phrase("sandbox.remote.no_answer", "gave no answer within {seconds} s")
UNREACHABLE = Phrase("sandbox.remote.unreachable", "cannot be reached: {error}")
BUSY = Phrase("sandbox.remote.busy", "is busy: its queue is full (503); try again or add capacity")
SECRET = Phrase("sandbox.remote.secret", "refused the secret (401): set SANDBOX_SECRET to the service's secret")
FAILED = Phrase("sandbox.remote.failed", "failed ({status})")
FAILED_SAYING = Phrase("sandbox.remote.failed_saying", "failed ({status}: {message})")
NOT_OBJECT = Phrase("sandbox.remote.not_object", "answered out of protocol (not a JSON object)")
REJECTED = Phrase("sandbox.remote.rejected", "the sandbox service rejected the request ({status}): {message}")
NO_REASON = Phrase("sandbox.remote.no_reason", "no reason")
NOT_JSON = Phrase("sandbox.remote.not_json", "the arguments are not JSON data: {error}")


class RemoteCodeRunner:
    """Runs ``CodeCall``s in the sandbox service at ``url``, sending ``secret`` as a bearer token.

    A call shaped as the product spec's (``evaluate(input, output, expected, metadata)`` with
    the spec's 128 MB) goes to ``POST /execute``, whose result the service validates as the
    ``code`` grader does; any other call goes to assay's ``POST /call``. Each request may take
    the call's timeout plus ``margin_s``; a full queue (503) is retried until then.
    Connections are kept alive, up to ``max_idle`` of them.
    """

    def __init__(self, url: str, secret: str | None, *, margin_s: float = DEADLINE_MARGIN_S,
                 max_idle: int = 64) -> None:
        self.url = url.rstrip("/")
        self.margin_s = margin_s
        headers = {"content-type": "application/json", "accept": "application/json"}
        if secret:
            headers["authorization"] = f"Bearer {secret}"
        self._http = Connections(self.url, headers, connect_timeout_s=CONNECT_TIMEOUT_S, max_idle=max_idle)

    def call(self, request: CodeCall) -> CodeOutcome:
        """Run ``request`` in the service; never raises."""
        deadline_s = request.timeout_ms / 1000 + self.margin_s
        if _spec_shaped(request):
            inp, out, expected, metadata = request.args
            body: dict[str, Any] = {"language": request.language, "code": request.source, "timeout": request.timeout_ms,
                                    "input": {"input": inp, "output": out, "expected": expected, "metadata": metadata}}
            answer = self._post("/execute", body, deadline_s)
            return answer if isinstance(answer, CodeOutcome) else outcome_from(answer, "result")
        body = {"language": request.language, "code": request.source, "function": request.function,
                "args": list(request.args), "timeout": request.timeout_ms, "memoryMb": request.memory_mb}
        answer = self._post("/call", body, deadline_s)
        return answer if isinstance(answer, CodeOutcome) else outcome_from(answer, "value")

    def call_batch(self, batch: CodeBatch) -> list[CodeOutcome]:
        """``batch`` in the service: the spec's calls through ``/execute/batch`` (``BATCH_INPUTS``
        a request, each run there as one sandbox batch), any other through ``/call`` one by one."""
        calls = list(batch.calls())
        if not calls or not all(_spec_shaped(c) for c in calls):
            return [self.call(c) for c in calls]
        out: list[CodeOutcome] = []
        for at in range(0, len(calls), BATCH_INPUTS):
            inputs = [{"input": i, "output": o, "expected": e, "metadata": m}
                      for i, o, e, m in batch.args[at:at + BATCH_INPUTS]]
            out += self.execute_batch(batch.language, batch.source, inputs, batch.timeout_ms, spread=batch.spread)
        return out

    def execute_batch(self, language: Language, source: str, inputs: Sequence[dict[str, Any]],
                      timeout_ms: int = 5000, *, spread: int = 0) -> list[CodeOutcome]:
        """``evaluate`` over many ``{input, output, expected, metadata}`` in one request
        (``POST /execute/batch``), outcomes in order; on failure, the same error for each.
        ``spread`` (when not 0) bounds the service's workers the batch runs on at once, as
        ``CodeBatch.spread`` does locally: a user's cap holds in the service too."""
        body: dict[str, Any] = {"language": language, "code": source, "inputs": list(inputs), "timeout": timeout_ms}
        if spread:
            body["spread"] = spread
        answer = self._post("/execute/batch", body, len(inputs) * timeout_ms / 1000 + self.margin_s)
        if isinstance(answer, CodeOutcome):
            return [answer] * len(inputs)
        results = answer.get("results")
        if not isinstance(results, list) or len(results) != len(inputs):
            broken = CodeOutcome(error=ErrorCode.UNAVAILABLE, message=OUT_OF_PROTOCOL())
            return [broken] * len(inputs)
        return [outcome_from(r if isinstance(r, dict) else {}, "result") for r in results]

    def check(self, language: Language, source: str, function: str = "evaluate") -> str | None:
        """None when ``source`` compiles and defines ``function``; else the problem, with its line.

        Asked of the service (``POST /check``); when it cannot answer, Python is checked here
        (the same compile as the sandbox's) and Node.js code is let through, as the local pool
        does when Node is unavailable: the calls will report it."""
        answer = self._post("/check", {"language": language, "code": source, "function": function}, CHECK_DEADLINE_S)
        if isinstance(answer, CodeOutcome):
            return check_python_source(source, function) if language == "python" else None
        problem = answer.get("problem")
        return problem if isinstance(problem, str) else None

    def health(self) -> dict[str, Any] | str:
        """The service's ``GET /health`` answer, or why it could not be had (``assay doctor``)."""
        try:
            reply = self._http.request("GET", "/health", None, CHECK_DEADLINE_S)
            if reply.status != 200:
                return f"the sandbox service at {self.url} answered {reply.status} to GET /health"
            answer = orjson.loads(reply.body)
        except (HttpError, orjson.JSONDecodeError) as exc:
            return f"the sandbox service at {self.url} cannot be reached: {exc}"
        return answer if isinstance(answer, dict) else f"the sandbox service at {self.url} answered out of protocol"

    def probe(self) -> dict[str, Any]:
        """For ``assay doctor``: ``{url, can_run, detail, health}``: whether the service answers,
        takes this secret (a ``/check`` of a one-line evaluator) and can run Python evaluators."""
        health = self.health()
        if isinstance(health, str):
            return {"url": self.url, "can_run": False, "detail": health, "health": None}
        tried = self._post("/check", {"language": "python", "code": "def evaluate(*a):\n    return None\n"},
                           CHECK_DEADLINE_S)
        if isinstance(tried, CodeOutcome):
            return {"url": self.url, "can_run": False, "detail": tried.message, "health": health}
        can_run = bool(health.get("python", {}).get("canRun"))
        detail = "reachable, the secret is accepted" + ("" if can_run else "; but it REFUSES untrusted code")
        return {"url": self.url, "can_run": can_run, "detail": detail, "health": health}

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> RemoteCodeRunner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- internals ---------------------------------------------------------------------
    def _post(self, path: str, body: dict[str, Any], deadline_s: float) -> dict[str, Any] | CodeOutcome:
        """The service's JSON answer, or the outcome that stands for its failure."""
        try:
            content = orjson.dumps(body)
        except TypeError as exc:
            return CodeOutcome(error=ErrorCode.INVALID_CONFIG, message=NOT_JSON(error=str(exc)))
        end = time.monotonic() + deadline_s
        for wait in (*_BUSY_BACKOFF_S, None):
            try:
                reply = self._http.request("POST", path, content, max(end - time.monotonic(), 0.05))
            except HttpError as exc:
                if exc.timed_out:
                    return self._unavailable(NO_ANSWER(seconds=f"{deadline_s:.1f}"))
                return self._unavailable(UNREACHABLE(error=str(exc)))
            if reply.status != 503:
                return self._answer(reply)
            pause = min(wait or 0.0, _retry_after(reply), end - time.monotonic() - 0.05)
            if wait is None or pause <= 0:
                return self._unavailable(BUSY())
            time.sleep(pause)
        raise AssertionError("unreachable")

    def _answer(self, reply: Reply) -> dict[str, Any] | CodeOutcome:
        status = reply.status
        try:
            answer = orjson.loads(reply.body)
        except orjson.JSONDecodeError:
            answer = None
        message = answer.get("error") if isinstance(answer, dict) and isinstance(answer.get("error"), str) else None
        if status == 401:
            return self._unavailable(SECRET())
        if status >= 500:
            said = FAILED_SAYING(status=status, message=message) if message else FAILED(status=status)
            return self._unavailable(said)
        if status != 200:  # 400, 413, 422: the request itself cannot be run there
            return CodeOutcome(error=ErrorCode.INVALID_CONFIG,
                               message=REJECTED(status=status, message=message or NO_REASON()))
        if not isinstance(answer, dict):
            return self._unavailable(NOT_OBJECT())
        return answer

    def _unavailable(self, what: Said) -> CodeOutcome:
        return CodeOutcome(error=ErrorCode.UNAVAILABLE, message=UNAVAILABLE(url=self.url, what=what))


def _spec_shaped(request: CodeCall) -> bool:
    """Whether ``request`` is the product spec's ``/execute`` call."""
    return (request.function == "evaluate" and len(request.args) == 4 and isinstance(request.args[3], dict)
            and request.memory_mb == SPEC_MEMORY_MB)


def _retry_after(reply: Reply) -> float:
    try:
        return max(0.0, float(reply.headers.get("retry-after", "1")))
    except ValueError:
        return 1.0
