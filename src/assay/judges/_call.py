"""One judge call over the openai SDK: retries, structured output, and the mapping of every
way it can go wrong onto a ``JudgeReply`` (never an exception).

The SDK's own retries are off (``max_retries=0``): this loop retries 429, 408/409, 5xx and
connection errors with exponential backoff and full jitter, honours ``Retry-After`` (and
``retry-after-ms``), and counts the attempts for ``reply.attempts``. A timeout is not retried:
the caller's time limit is for the call, and a judge slow once is slow again.
"""

from __future__ import annotations

import asyncio
import email.utils
import json
import logging
import math
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import httpx2
import openai

from assay.core.judge import JudgeReply, JudgeRequest
from assay.core.result import ErrorCode
from assay.judges import _words as W

log = logging.getLogger("assay.judges")

MAX_RETRY_AFTER_S = 60.0
"""A ``Retry-After`` longer than this ends the call (``unavailable``) rather than holding a run."""
_RETRYABLE = frozenset({408, 409, 429})


@dataclass(frozen=True, slots=True)
class Policy:
    """How a call is retried: ``max_retries`` after the first attempt, waiting
    ``backoff_s * 2**(n-1)`` (at most ``backoff_max_s``), times a random factor in [0.5, 1]."""

    max_retries: int = 4
    backoff_s: float = 0.5
    backoff_max_s: float = 8.0

    def backoff(self, retry: int) -> float:
        return min(self.backoff_max_s, self.backoff_s * 2 ** (retry - 1)) * random.uniform(0.5, 1.0)


@dataclass(slots=True)
class Endpoint:
    """An SDK client for one (base URL, key) pair, and what was learnt about the endpoint."""

    base_url: str
    sdk: Any
    keyed: bool
    json_schema: bool = True  # cleared when the endpoint rejects response_format


async def complete(endpoint: Endpoint, model: str, request: JudgeRequest, *, timeout_s: float,
                   policy: Policy, limit: asyncio.Semaphore, scrub: Callable[[str], str]) -> JudgeReply:
    """Ask ``endpoint`` for one chat completion; the reply carries text or an error code."""
    start = time.perf_counter()
    attempts = retries = 0
    while True:
        attempts += 1
        with_schema = request.schema is not None and endpoint.json_schema
        wait: float | None
        try:
            async with limit:  # held for the request only, not while backing off
                async with asyncio.timeout(timeout_s):  # the whole attempt, however the bytes trickle
                    # The SDK's documented low-level call: its auth, headers and error mapping, but
                    # the body is read as JSON here rather than through its typed models, which
                    # cost more CPU than everything else on the loop thread.
                    response = await endpoint.sdk.post("/chat/completions", cast_to=httpx2.Response,
                                                       body=_params(model, request, with_schema),
                                                       options={"timeout": timeout_s})
        except (asyncio.TimeoutError, openai.APITimeoutError):
            return _fail(ErrorCode.TIMEOUT, W.NO_ANSWER(model=model, seconds=f"{timeout_s:g}"), model, attempts, start)
        except openai.APIStatusError as exc:
            status = exc.status_code
            if status == 400 and with_schema and _about_response_format(exc):
                endpoint.json_schema = False  # remembered: later calls go without it at once
                log.info("judge endpoint %s does not support response_format; asking for plain JSON text",
                         scrub(endpoint.base_url))
                continue
            if status not in _RETRYABLE and status < 500:
                message = _status_message(exc, model, endpoint, scrub)
                return _fail(ErrorCode.UNAVAILABLE, message, model, attempts, start)
            last = W.LAST_HTTP(status=status)
            wait = _retry_after(exc.response.headers)
            if wait is not None and wait > MAX_RETRY_AFTER_S:
                said = W.WAIT_TOO_LONG(last=last, seconds=f"{wait:g}", most=f"{MAX_RETRY_AFTER_S:g}")
                return _fail(ErrorCode.UNAVAILABLE, said, model, attempts, start)
        except openai.APIConnectionError as exc:
            last, wait = W.LAST_CONNECTION(error=scrub(str(exc.__cause__ or exc))), None
        except openai.OpenAIError as exc:
            return _fail(ErrorCode.UNAVAILABLE, W.FAILED(error=scrub(str(exc))), model, attempts, start)
        else:
            return _reply(response.content, model, request, attempts, start, scrub)
        retries += 1
        if retries > policy.max_retries:
            return _fail(ErrorCode.UNAVAILABLE, W.GAVE_UP(attempts=attempts, last=last), model, attempts, start)
        delay = wait if wait is not None else policy.backoff(retries)
        log.debug("judge call to %s: %s; retry %d in %.2f s", scrub(endpoint.base_url), last, retries, delay)
        await asyncio.sleep(delay)


def _params(model: str, request: JudgeRequest, with_schema: bool) -> dict[str, Any]:
    params: dict[str, Any] = {"model": model, "temperature": request.temperature,
                              "messages": [{"role": m.role, "content": m.content} for m in request.messages]}
    if request.max_tokens is not None:
        params["max_tokens"] = request.max_tokens
    if request.seed is not None:
        params["seed"] = request.seed
    if request.top_logprobs is not None:
        params["logprobs"] = True
        params["top_logprobs"] = request.top_logprobs
    if with_schema and request.schema is not None:
        params["response_format"] = {"type": "json_schema", "json_schema": {
            "name": request.schema.get("name", "verdict"), "schema": request.schema.get("schema", {}), "strict": True}}
    return params


def _reply(content: bytes, model: str, request: JudgeRequest, attempts: int, start: float,
           scrub: Callable[[str], str]) -> JudgeReply:
    try:
        completion = json.loads(content)
        choices = completion["choices"]
        message = choices[0]["message"] if choices else {}
        if not isinstance(message, dict) or not isinstance(completion, dict):
            raise TypeError
    except (ValueError, KeyError, TypeError, IndexError):
        return _fail(ErrorCode.UNAVAILABLE, W.NOT_COMPLETION(), model, attempts, start)
    usage = _usage(completion.get("usage"))
    served = completion.get("model") if isinstance(completion.get("model"), str) and completion["model"] else model
    refusal = message.get("refusal")
    if refusal:
        return _fail(ErrorCode.UNAVAILABLE, W.REFUSED(refusal=scrub(str(refusal))), served, attempts, start)
    text = message.get("content")
    calls = message.get("tool_calls") or []
    if not (isinstance(text, str) and text.strip()) and calls and isinstance(calls[0], dict):
        text = (calls[0].get("function") or {}).get("arguments")  # a tool call's arguments
    if not (isinstance(text, str) and text.strip()):
        reply = _fail(ErrorCode.UNAVAILABLE, W.EMPTY(), served, attempts, start)
        reply.usage = usage
        return reply
    parsed = None
    if request.schema is not None:
        try:
            parsed = json.loads(text)
        except ValueError:
            parsed = None  # the grader reports the unparsable text as parse_failure
    return JudgeReply(text=text, parsed=parsed, model=served, usage=usage, attempts=attempts,
                      latency_ms=(time.perf_counter() - start) * 1000,
                      top_logprobs=_first_token(choices[0]) if request.top_logprobs is not None else None)


def _first_token(choice: Any) -> dict[str, float] | None:
    """The first token's alternatives, {token: log-probability}, from a choice's
    ``logprobs.content[0].top_logprobs`` (OpenAI's shape, which llama.cpp and vLLM follow); a
    token listed twice (two ids, one spelling) counts once with both probabilities. None when
    the choice has none."""
    try:
        alternatives = choice["logprobs"]["content"][0]["top_logprobs"]
    except (KeyError, IndexError, TypeError):
        return None
    found: dict[str, float] = {}
    for entry in alternatives if isinstance(alternatives, list) else ():
        token, logprob = (entry.get("token"), entry.get("logprob")) if isinstance(entry, dict) else (None, None)
        if isinstance(token, str) and isinstance(logprob, int | float) and not isinstance(logprob, bool) \
                and math.isfinite(logprob) and logprob <= 0:
            found[token] = math.log(math.exp(found[token]) + math.exp(logprob)) if token in found else float(logprob)
    return found or None


def _usage(usage: Any) -> dict[str, int]:
    if not isinstance(usage, dict):
        return {}
    return {name: usage[name] for name in ("prompt_tokens", "completion_tokens")
            if isinstance(usage.get(name), int) and not isinstance(usage.get(name), bool)}


def _fail(code: ErrorCode, message: str, model: str | None, attempts: int, start: float) -> JudgeReply:
    return JudgeReply(error=code, message=message, model=model, attempts=attempts,
                      latency_ms=(time.perf_counter() - start) * 1000)


def _about_response_format(exc: openai.APIStatusError) -> bool:
    text = f"{exc.message} {exc.body}".lower()
    return "response_format" in text or "json_schema" in text or "response format" in text


def _status_message(exc: openai.APIStatusError, model: str, endpoint: Endpoint, scrub: Callable[[str], str]) -> str:
    status, url, detail = exc.status_code, scrub(endpoint.base_url), scrub(_detail(exc))
    if status in (401, 403):
        return (W.KEY_WRONG if endpoint.keyed else W.KEY_UNSET)(url=url, status=status, detail=detail)
    if status == 404:
        return W.NO_MODEL_THERE(url=url, model=scrub(repr(model)), detail=detail)
    return W.STATUS(url=url, status=status, detail=detail)


def _detail(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        body = body.get("message") or body.get("error") or body
    text = str(body or exc.message or "").strip()
    return f": {text[:300]}" if text else ""


def _retry_after(headers: Any) -> float | None:
    """Seconds the server asked to wait (``retry-after-ms``, ``retry-after`` in seconds or as
    an HTTP date), or None."""
    try:
        if headers.get("retry-after-ms"):
            return max(0.0, float(headers["retry-after-ms"]) / 1000)
        raw = headers.get("retry-after")
        if not raw:
            return None
        try:
            return max(0.0, float(raw))
        except ValueError:
            when = email.utils.parsedate_to_datetime(raw)
            return max(0.0, when.timestamp() - time.time())
    except (ValueError, TypeError):
        return None
