"""The judge interface: what LLM graders ask of a chat model, and what comes back.

A ``JudgeClient`` (real adapter in ``assay.judges``, a fake in ``tests/fakes.py``) sends
``JudgeRequest``s to any OpenAI-compatible chat endpoint. Graders build requests (messages,
a JSON Schema for structured output, a cache key) and read ``JudgeReply``s; they never see
keys, HTTP or retries. A reply is either text (and, with structured output, the parsed JSON)
or an error code with a message: ``timeout``, ``unavailable`` (refused, rate-limited to the
end, unreachable, empty), never an exception.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from assay.core.result import ErrorCode

Role = Literal["system", "user", "assistant"]


@dataclass(frozen=True, slots=True)
class JudgeMessage:
    role: Role
    content: str


@dataclass(frozen=True, slots=True)
class JudgeRequest:
    """One chat completion to ask for.

    ``model``, ``base_url`` and ``api_key_env`` (the *name* of an environment variable holding
    the key, never the key) override the client's defaults. ``schema`` asks for structured
    output (``{"name": ..., "schema": {...}}``); endpoints without it get the same request
    without ``response_format`` and the grader parses the text strictly. ``cache_key`` names
    the request's stable content (spec, rubric, model, parameters, messages before per-call
    randomness such as fence delimiters); None disables caching for this request.
    ``top_logprobs`` asks for the first token's most likely alternatives instead of a verdict
    to parse (``scoring: logprobs``): that many, with their log-probabilities.
    """

    messages: tuple[JudgeMessage, ...]
    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    temperature: float = 0.0
    max_tokens: int | None = None
    seed: int | None = None
    schema: dict[str, Any] | None = None
    timeout_s: float = 60.0
    cache_key: str | None = None
    top_logprobs: int | None = None


@dataclass(slots=True)
class JudgeReply:
    """What the judge answered, or why it could not.

    ``text`` is the reply's content (or a tool call's arguments); ``parsed`` the JSON value when
    structured output was used and the text parsed. ``usage``: token counts
    (``prompt_tokens``, ``completion_tokens``); ``cost_usd`` from the configured price table,
    or None when the model has no price. ``cached``: served from the cache, no call made.
    ``top_logprobs``: when the request asked for them, the first token's alternatives as
    {token: log-probability} (None when the endpoint sent none).
    """

    text: str | None = None
    parsed: Any = None
    error: ErrorCode | None = None
    message: str | None = None
    model: str | None = None
    usage: dict[str, int] = field(default_factory=dict)
    cost_usd: float | None = None
    cached: bool = False
    latency_ms: float = 0.0
    attempts: int = 1
    top_logprobs: dict[str, float] | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


class JudgeClient(Protocol):
    """Sends judge requests; thread-safe. ``judge_many`` runs requests concurrently under the
    client's one global concurrency limit and returns replies in request order."""

    def judge(self, request: JudgeRequest) -> JudgeReply: ...

    def judge_many(self, requests: Sequence[JudgeRequest]) -> list[JudgeReply]: ...
