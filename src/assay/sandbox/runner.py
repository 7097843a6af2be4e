"""``SandboxRunner``: the ``CodeRunner`` that dispatches by language to one pool per language
(see the package's docstring)."""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Callable
from typing import Protocol

from assay.core.interfaces import CodeBatch, CodeCall, CodeOutcome, Language, call_batch
from assay.core.result import ErrorCode

__all__ = ["LanguagePool", "SandboxRunner", "open_code_runner"]


class LanguagePool(Protocol):
    """What ``PythonPool`` and ``NodePool`` both offer: a ``CodeRunner`` for one language, and ``close``."""

    def call(self, request: CodeCall) -> CodeOutcome: ...

    def call_batch(self, batch: CodeBatch) -> list[CodeOutcome]: ...

    def check(self, language: str, source: str, function: str = "evaluate") -> str | None: ...

    def close(self) -> None: ...


def _open_python(size: int, weak: bool, node: str | None, locale: str, demote_after_s: float | None,
                 spare: int) -> LanguagePool:
    from assay.sandbox.python import PythonPool

    return PythonPool(size, weak=weak, demote_after_s=demote_after_s, spare=spare)


def _open_node(size: int, weak: bool, node: str | None, locale: str, demote_after_s: float | None,
               spare: int) -> LanguagePool:
    from assay.sandbox.node import NodePool

    return NodePool(size, weak=weak, node=node, demote_after_s=demote_after_s, locale=locale, spare=spare)


_Opener = Callable[[int, bool, str | None, str, float | None, int], LanguagePool]
_OPENERS: dict[str, tuple[str, _Opener]] = {
    "python": ("Python", _open_python),
    "nodejs": ("Node.js", _open_node),
}


class SandboxRunner:
    """Dispatches by ``CodeCall.language`` to one pool per language, each opened on first use.

    ``size``: workers per pool (default: one per CPU core), ``workers`` once decided: what
    ``runner.sizing.code_slots`` reads. ``weak``: run code even when an
    isolation layer is missing (the settings' ``sandbox_allow_weak``). ``node``: the Node.js
    executable (the settings' ``node_binary``; default: ``node`` on ``PATH``), run under ``locale``
    (the settings' ``LANG``).
    ``demote_after_s``: lower the CPU priority of code that runs longer (``sandbox.priority``;
    default: never), for a pool with more workers than cores, shared by users. A pool that
    cannot be opened (Node.js missing or broken) makes that language's calls ``unavailable``;
    it never fails the run. ``spare``: started workers each pool keeps idle in reserve (a
    server's sandbox, shared by users: the next user's call does not pay a worker's start).
    """

    def __init__(self, *, size: int | None = None, weak: bool = False, node: str | None = None,
                 locale: str = "C.UTF-8", demote_after_s: float | None = None, spare: int = 0) -> None:
        self._spare = spare
        self.workers = max(1, size or os.cpu_count() or 1)
        """Workers per language: every pool this runner opens has this many."""
        self._demote_after_s = demote_after_s
        self._weak = weak
        self._node = node
        self._locale = locale
        self._pools: dict[str, LanguagePool] = {}
        self._problems: dict[str, str] = {}  # language -> why its pool could not be opened
        self._lock = threading.Lock()
        self._closed = False
        # weakref.finalize, as in both pools: at garbage collection and at interpreter exit.
        weakref.finalize(self, _close_pools, self._pools)

    def call(self, request: CodeCall) -> CodeOutcome:
        pool = self._pool(request.language)
        if isinstance(pool, CodeOutcome):
            return pool
        return pool.call(request)

    def call_batch(self, batch: CodeBatch) -> list[CodeOutcome]:
        """One outcome per sample of ``batch``, in order: chunks of it run in one confined process
        (Python) or one worker request (Node.js) each, every sample under the batch's limits."""
        pool = self._pool(batch.language)
        if isinstance(pool, CodeOutcome):
            return [pool] * len(batch.args)
        return call_batch(pool, batch)

    def check(self, language: Language, source: str, function: str = "evaluate") -> str | None:
        """None when ``source`` compiles and defines ``function``; else the problem, with its line."""
        pool = self._pool(language)
        if isinstance(pool, CodeOutcome):
            return pool.message
        return pool.check(language, source, function)

    def _pool(self, language: str) -> LanguagePool | CodeOutcome:
        if self._closed:
            return CodeOutcome(error=ErrorCode.UNAVAILABLE, message="the code sandbox is closed")
        pool = self._pools.get(language)
        if pool is not None:
            return pool
        if language not in _OPENERS:
            return CodeOutcome(error=ErrorCode.INVALID_CONFIG,
                               message=f"unknown language {language!r}: use python or nodejs")
        with self._lock:
            if language not in self._pools and language not in self._problems:
                self._open(language)
        pool = self._pools.get(language)  # None when it could not be opened, or was just closed
        if pool is None:
            return CodeOutcome(error=ErrorCode.UNAVAILABLE,
                               message=self._problems.get(language, "the code sandbox is closed"))
        return pool

    def _open(self, language: str) -> None:
        name, opener = _OPENERS[language]
        try:
            self._pools[language] = opener(self.workers, self._weak, self._node, self._locale, self._demote_after_s,
                                           self._spare)
        except ImportError as exc:
            self._problems[language] = f"the {name} sandbox is not available: {exc}"
        except Exception as exc:  # noqa: BLE001 - a runtime missing or broken: report, do not crash the run
            self._problems[language] = f"the {name} sandbox could not start: {exc}"

    def close(self) -> None:
        """Stop every pool and the processes they started."""
        self._closed = True
        _close_pools(self._pools)

    def __enter__(self) -> SandboxRunner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _close_pools(pools: dict[str, LanguagePool]) -> None:
    while pools:
        pools.popitem()[1].close()


def open_code_runner(*, size: int | None = None, weak: bool = False, node: str | None = None,
                     locale: str = "C.UTF-8", demote_after_s: float | None = None, spare: int = 0) -> SandboxRunner:
    """Create the process-wide code runner (see ``SandboxRunner`` for the options)."""
    return SandboxRunner(size=size, weak=weak, node=node, locale=locale, demote_after_s=demote_after_s, spare=spare)
