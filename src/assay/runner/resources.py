"""The real I/O adapters, built from ``Settings`` at the composition root and shared by a
whole process (a CLI run, the library's defaults, the service)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from assay.core.context import Language, SpecContext
from assay.core.interfaces import CodeBatch, CodeCall, CodeOutcome, CodeRunner, Resources, call_batch
from assay.core.judge import JudgeReply, JudgeRequest
from assay.runner.sizing import local_sandbox_workers
from assay.settings import Settings


class LazyCodeRunner:
    """Starts the sandbox on first use, so suites without code graders never pay for it:
    ``open_runner`` builds it (``code_runner_opener`` picks the local pool or the service).
    ``workers``: the sandbox's workers per language when its pools are this process's (None: a
    sandbox service elsewhere), known before it starts (``sizing.code_slots``)."""

    def __init__(self, open_runner: Callable[[], CodeRunner], workers: int | None = None) -> None:
        self._open_runner = open_runner
        self.workers = workers
        self._runner: Any = None
        self._lock = threading.Lock()

    def _get(self) -> Any:
        if self._runner is None:
            with self._lock:
                if self._runner is None:
                    self._runner = self._open_runner()
        return self._runner

    def call(self, request: CodeCall) -> CodeOutcome:
        return self._get().call(request)

    def call_batch(self, batch: CodeBatch) -> list[CodeOutcome]:
        return call_batch(self._get(), batch)

    def check(self, language: Language, source: str, function: str = "evaluate") -> str | None:
        return self._get().check(language, source, function)

    def close(self) -> None:
        if self._runner is not None:
            self._runner.close()
            self._runner = None


class LazyJudgeClient:
    """Builds the judge client (SDK, event loop thread, cache file) on first use, so suites
    without LLM graders never pay for it."""

    def __init__(self, settings: Settings, *, read_cache: bool = True) -> None:
        self._settings = settings
        self._read_cache = read_cache
        self._client: Any = None
        self._lock = threading.Lock()

    def _get(self) -> Any:
        if self._client is None:
            with self._lock:
                if self._client is None:
                    from assay.judges import OpenAIJudgeClient

                    self._client = OpenAIJudgeClient.from_settings(self._settings, read_cache=self._read_cache)
        return self._client

    def judge(self, request: JudgeRequest) -> JudgeReply:
        return self._get().judge(request)

    def judge_many(self, requests: Sequence[JudgeRequest]) -> list[JudgeReply]:
        return self._get().judge_many(requests)

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None


def local_workers(settings: Settings, *, shared: bool = False) -> int | None:
    """Workers per language of the sandbox ``code_runner_opener`` opens: None for the sandbox
    service (its pools are not here), else ``sizing.local_sandbox_workers`` (one per core, or for
    a server, ``shared`` by its users, ``ASSAY_SANDBOX_WORKERS`` or four per core)."""
    if settings.sandbox_url:
        return None
    return local_sandbox_workers(settings.sandbox_workers if shared else 0, shared=shared)


def code_runner_opener(settings: Settings, *, shared: bool = False) -> Callable[[], CodeRunner]:
    """What opens the code runner: the sandbox service when ``SANDBOX_URL`` is set (with
    ``SANDBOX_SECRET``), else the local sandbox pool of ``local_workers`` workers, with code that
    runs long lowered in CPU priority (``sandbox.priority``) when ``shared`` by a server's users,
    and then one started worker more than a user may keep busy kept idle in reserve: whatever
    one user's evaluations hold, the next user's test starts at once, without waiting for a
    worker's start (a few hundred milliseconds)."""
    if settings.sandbox_url:
        url, secret = settings.sandbox_url, settings.sandbox_secret

        def remote() -> CodeRunner:
            from assay.sandbox.remote import RemoteCodeRunner

            return RemoteCodeRunner(url, secret)

        return remote

    def local() -> CodeRunner:
        from assay.sandbox import open_code_runner
        from assay.sandbox.priority import DEMOTE_AFTER_S

        return open_code_runner(size=local_workers(settings, shared=shared), weak=settings.sandbox_allow_weak,
                                node=settings.node_binary, locale=settings.locale,
                                demote_after_s=DEMOTE_AFTER_S if shared else None,
                                spare=settings.user_code_cap + 1 if shared else 0)

    return local


def describe_code_runner(settings: Settings) -> str:
    """Which code runner ``build_resources`` uses, in words (``assay doctor``)."""
    if settings.sandbox_url:
        return f"the sandbox service at {settings.sandbox_url} (SANDBOX_URL)"
    return "the local sandbox pool (SANDBOX_URL is not set)"


def build_resources(settings: Settings, *, judge_cache_reads: bool = True, shared: bool = False) -> Resources:
    """Adapters for graders: the code sandbox (local, or the sandbox service when ``SANDBOX_URL``
    is set) and the judge client (both started lazily) and the program runner.
    ``judge_cache_reads=False`` is ``--no-cache``: judge replies are asked for afresh (and still
    stored, refreshing the cache). ``shared``: the sandbox of a server shared by users
    (``code_runner_opener``)."""
    from assay.sandbox.process import LocalProcessRunner

    code = LazyCodeRunner(code_runner_opener(settings, shared=shared), local_workers(settings, shared=shared))
    judge = LazyJudgeClient(settings, read_cache=judge_cache_reads)
    return Resources(code_runner=code, process_runner=LocalProcessRunner(environ=settings.environ), judge_client=judge)


def build_context(settings: Settings, resources: Resources, base_dir: Path | None = None) -> SpecContext:
    """The validation context for specs graded with ``resources``: Node.js code is checked
    by the same sandbox that will run it, and code timeouts are capped by the settings."""
    runner = resources.code_runner
    return SpecContext(base_dir=base_dir, check_code=runner.check if runner is not None else None,
                       code_timeout_max_ms=settings.code_timeout_max_ms)


class Defaults:
    """What ``assay.grade`` uses when the caller passes nothing: settings read once from the
    environment, and resources built from them on first use."""

    _lock = threading.Lock()
    _settings: Settings | None = None
    _resources: Resources | None = None

    @classmethod
    def settings(cls) -> Settings:
        if cls._settings is None:
            with cls._lock:
                if cls._settings is None:
                    cls._settings = Settings.from_env()
        return cls._settings

    @classmethod
    def resources(cls) -> Resources:
        if cls._resources is None:
            settings = cls.settings()
            with cls._lock:
                if cls._resources is None:
                    cls._resources = build_resources(settings)
        return cls._resources

    @classmethod
    def context(cls, base_dir: Path | None = None) -> SpecContext:
        return build_context(cls.settings(), cls.resources(), base_dir)


def default_resources() -> Resources:
    """The process-wide resources used by ``assay.grade`` and ``assay run``."""
    return Defaults.resources()
