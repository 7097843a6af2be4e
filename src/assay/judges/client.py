"""``OpenAIJudgeClient``: the ``JudgeClient`` over any OpenAI-compatible chat endpoint
(OpenAI, Azure OpenAI, vLLM, Ollama, llama.cpp, LiteLLM) through the openai SDK.

The client owns one asyncio event loop in a daemon thread. ``judge`` and ``judge_many`` are
called from any thread: they look requests up in the cache, hand the misses to the loop and
wait. One semaphore on that loop bounds the calls in flight across every grader and thread.
Keys are never logged and are scrubbed from every message a reply carries.

Plain-HTTP endpoints without a proxy (local servers) go through a lean keep-alive transport
(``_transport.py``) because the SDK's default HTTP stack, not the network, limits a local
server's throughput; https endpoints and proxied setups use the SDK's own stack.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import dataclasses
import threading
from collections.abc import Mapping, Sequence
from typing import Any

from assay.core.judge import JudgeReply, JudgeRequest
from assay.core.result import ErrorCode
from assay.judges import _words as W
from assay.judges._call import Endpoint, Policy, complete
from assay.judges.cache import JudgeCache, cache_key
from assay.judges.prices import Price, cost_usd, load_prices

DEFAULT_BASE_URL = "https://api.openai.com/v1"
_NO_KEY = "assay-no-key"  # local servers want some bearer token; OpenAI answers 401, which we explain
_REQUEST_DEFAULT_TIMEOUT = next(f.default for f in dataclasses.fields(JudgeRequest) if f.name == "timeout_s")
_REDACTED = "[redacted]"
_PROXY_VARIABLES = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")


class OpenAIJudgeClient:
    """Sends ``JudgeRequest``s to an OpenAI-compatible endpoint; thread-safe, never raises.

    ``base_url``, ``api_key`` and ``model`` are the defaults a request may override (``model``,
    ``base_url``, and ``api_key_env``: the name of a variable in ``environ`` holding the key).
    ``concurrency`` bounds calls in flight in all; ``timeout_s`` is the time limit of one
    attempt for requests that keep ``JudgeRequest``'s default; ``max_retries`` and
    ``backoff_s`` shape retries on 429, 5xx and connection errors. ``cache`` (or None) serves
    repeated requests; ``prices`` (dollars per million tokens) gives ``cost_usd``.

    Example::

        client = OpenAIJudgeClient(base_url="http://127.0.0.1:11434/v1", model="llama3.1")
        reply = client.judge(JudgeRequest(messages=(JudgeMessage("user", "Say OK"),)))
        reply.text, reply.error, reply.usage, reply.attempts
    """

    def __init__(self, *, base_url: str | None = None, api_key: str | None = None, model: str | None = None,
                 concurrency: int = 32, timeout_s: float = 60.0, max_retries: int = 4, backoff_s: float = 0.5,
                 cache: JudgeCache | None = None, prices: Mapping[str, Price] | None = None,
                 environ: Mapping[str, str] | None = None) -> None:
        self.base_url = (base_url or DEFAULT_BASE_URL).rstrip("/")
        self.model = model
        self.concurrency = concurrency
        self.timeout_s = float(timeout_s)
        self.cache = cache
        self._api_key = api_key
        self._policy = Policy(max_retries=max_retries, backoff_s=backoff_s)
        self._prices = dict(prices or {})
        self._environ = dict(environ or {})
        self._secrets = {api_key} if api_key else set()
        self._endpoints: dict[tuple[str, str], Endpoint] = {}  # touched on the loop thread only
        self._loop = asyncio.new_event_loop()
        self._limit = asyncio.Semaphore(concurrency)
        self._thread = threading.Thread(target=self._loop.run_forever, name="assay-judge", daemon=True)
        self._thread.start()

    @classmethod
    def from_settings(cls, settings: Any, *, read_cache: bool = True) -> OpenAIJudgeClient:
        """The client ``settings`` describe (``ASSAY_JUDGE_*``, ``OPENAI_*``); ``read_cache=False``
        is ``--no-cache``: fresh calls whose replies still refresh the cache."""
        cache = JudgeCache(settings.judge_cache, read=read_cache) if settings.judge_cache else None
        return cls(base_url=settings.judge_base_url, api_key=settings.judge_api_key, model=settings.judge_model,
                   concurrency=settings.judge_concurrency, timeout_s=settings.judge_timeout_s,
                   max_retries=settings.judge_max_retries, cache=cache,
                   prices=load_prices(settings.judge_prices), environ=settings.environ)

    def judge(self, request: JudgeRequest) -> JudgeReply:
        """One request; see ``judge_many``."""
        return self.judge_many([request])[0]

    def judge_many(self, requests: Sequence[JudgeRequest]) -> list[JudgeReply]:
        """Replies in request order: cache hits at once, the rest concurrently under the
        client's one concurrency limit. Successful fresh replies are stored in the cache."""
        replies: list[JudgeReply | None] = [None] * len(requests)
        pending: list[tuple[int, JudgeRequest, str, str, str, str | None]] = []
        for i, request in enumerate(requests):
            resolved = self._resolve(request)
            if isinstance(resolved, JudgeReply):
                replies[i] = resolved
                continue
            model, base_url, key = resolved
            address = cache_key(request, model, base_url) if self.cache is not None else None
            hit = self.cache.get(address) if self.cache is not None and address is not None else None
            if hit is not None:
                replies[i] = hit
            else:
                pending.append((i, request, model, base_url, key, address))
        if pending:
            problem = (W.CLOSED() if self._loop.is_closed() else
                       W.OWN_LOOP() if threading.current_thread() is self._thread else None)
            if problem is not None:
                fresh = [_error(ErrorCode.UNAVAILABLE, problem) for _ in pending]
            else:
                calls = [(r, m, b, k) for _, r, m, b, k, _ in pending]
                try:
                    fresh = asyncio.run_coroutine_threadsafe(self._gather(calls), self._loop).result()
                except (concurrent.futures.CancelledError, RuntimeError):  # closed while waiting
                    fresh = [_error(ErrorCode.UNAVAILABLE, W.CLOSED()) for _ in pending]
            for (i, _, _, _, _, address), reply in zip(pending, fresh, strict=True):
                if self.cache is not None and address is not None:
                    self.cache.put(address, reply)
                replies[i] = reply
        return [r for r in replies if r is not None]

    def close(self) -> None:
        """Close the SDK clients, stop the loop and the cache. Idempotent."""
        if self._loop.is_closed():
            return
        if self._thread.is_alive():
            asyncio.run_coroutine_threadsafe(self._close_endpoints(), self._loop).result(timeout=10)
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout=10)
        self._loop.close()
        if self.cache is not None:
            self.cache.close()

    def _resolve(self, request: JudgeRequest) -> tuple[str, str, str] | JudgeReply:
        """(model, base URL, key) for ``request``, or the reply saying why it cannot be sent."""
        model = request.model or self.model
        if not model:
            return _error(ErrorCode.INVALID_CONFIG, W.NO_MODEL())
        base_url = (request.base_url or self.base_url).rstrip("/")
        if request.api_key_env:
            key = self._environ.get(request.api_key_env)
            if not key:
                return _error(ErrorCode.INVALID_CONFIG, W.KEY_ENV_UNSET(name=request.api_key_env), model)
            self._secrets.add(key)
        else:
            key = self._api_key or _NO_KEY
        return model, base_url, key

    async def _gather(self, calls: list[tuple[JudgeRequest, str, str, str]]) -> list[JudgeReply]:
        results = await asyncio.gather(*(self._one(*call) for call in calls), return_exceptions=True)
        return [r if isinstance(r, JudgeReply) else
                _error(ErrorCode.UNAVAILABLE, W.FAILED(error=self._scrub(repr(r)))) for r in results]

    async def _one(self, request: JudgeRequest, model: str, base_url: str, key: str) -> JudgeReply:
        timeout = self.timeout_s if request.timeout_s in (None, _REQUEST_DEFAULT_TIMEOUT) else request.timeout_s
        reply = await complete(self._endpoint(base_url, key), model, request, timeout_s=timeout,
                               policy=self._policy, limit=self._limit, scrub=self._scrub)
        if reply.ok:
            reply.cost_usd = cost_usd(self._prices, (reply.model, model), reply.usage)
        return reply

    def _endpoint(self, base_url: str, key: str) -> Endpoint:
        endpoint = self._endpoints.get((base_url, key))
        if endpoint is None:
            import openai

            # Explicit base URL and key: the SDK must not read OPENAI_* itself (settings did).
            sdk = openai.AsyncOpenAI(base_url=base_url, api_key=key, max_retries=0, timeout=self.timeout_s,
                                     http_client=self._http_client(base_url))
            endpoint = self._endpoints[(base_url, key)] = Endpoint(base_url, sdk, keyed=key != _NO_KEY)
        return endpoint

    def _http_client(self, base_url: str) -> Any:
        """The lean transport for plain-HTTP endpoints (local servers, where the SDK's own
        per-call CPU is what limits throughput) when no proxy is configured; None (the SDK's
        own stack, with TLS, HTTP proxies and its connection pool) for everything else."""
        if not base_url.startswith("http://") or any(self._environ.get(name) for name in _PROXY_VARIABLES):
            return None
        import httpx2

        from assay.judges._transport import LeanTransport

        return httpx2.AsyncClient(transport=LeanTransport(), timeout=self.timeout_s, follow_redirects=True)

    async def _close_endpoints(self) -> None:
        current = asyncio.current_task()
        waiting = [t for t in asyncio.all_tasks() if t is not current]
        for task in waiting:  # calls still in flight end now; their callers get "closed"
            task.cancel()
        await asyncio.gather(*waiting, return_exceptions=True)
        for endpoint in self._endpoints.values():
            await endpoint.sdk.close()
        self._endpoints.clear()

    def _scrub(self, text: str) -> str:
        for secret in tuple(self._secrets):  # a snapshot: callers' threads may add keys meanwhile
            if len(secret) >= 4:
                text = text.replace(secret, _REDACTED)
        return text


def _error(code: ErrorCode, message: str, model: str | None = None) -> JudgeReply:
    return JudgeReply(error=code, message=message, model=model, attempts=0)
