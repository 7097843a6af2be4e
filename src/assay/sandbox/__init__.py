"""Isolated execution of user code evaluators (Python and Node.js) behind ``CodeRunner``.

``open_code_runner()`` returns one object for a whole run or a service: thread-safe, started
lazily per language, and shut down by ``close()`` (also at interpreter exit) without leaving
processes behind. The boundary is the operating system (:mod:`assay.sandbox.confine`), not
the language runtime.
"""

from __future__ import annotations

import threading
import weakref
from typing import Any

from assay.core.interfaces import CodeCall, CodeOutcome, Language
from assay.core.result import ErrorCode

__all__ = ["SandboxRunner", "open_code_runner"]


class SandboxRunner:
    """Dispatches by ``CodeCall.language``: ``python`` to the zygote pool, ``nodejs`` to the Node pool.

    ``python`` options: ``workers`` (zygotes; default one per core), ``allow_weak``, ``uid``.
    ``node_options`` are handed to ``assay.sandbox.node.NodePool`` unchanged.
    """

    def __init__(self, workers: int | None = None, allow_weak: bool | None = None,
                 node_options: dict[str, Any] | None = None, *, weak: bool | None = None,
                 node: str | None = None, **python_options: Any) -> None:
        allow_weak = weak if allow_weak is None else allow_weak
        self._python_options = {"workers": workers, "allow_weak": allow_weak, **python_options}
        self._node_options = {"weak": allow_weak, **(node_options or {})}
        self._node_binary = node
        self._python: Any = None
        self._node: Any = None
        self._node_problem: str | None = None
        self._lock = threading.Lock()
        self._closed = False
        self._pools: list[Any] = []
        weakref.finalize(self, _close_pools, self._pools)  # at garbage collection and at exit

    def call(self, request: CodeCall) -> CodeOutcome:
        pool = self._pool(request.language)
        if isinstance(pool, CodeOutcome):
            return pool
        return pool.call(request)

    def check(self, language: Language, source: str, function: str = "evaluate") -> str | None:
        """Return None when ``source`` compiles and defines ``function``; else the problem."""
        if language == "python":
            from assay.sandbox.python import check_source

            return check_source(source, function)
        pool = self._pool(language)
        if isinstance(pool, CodeOutcome):
            return pool.message
        return pool.check(language, source, function)

    def _pool(self, language: str) -> Any:
        if self._closed:
            return CodeOutcome(error=ErrorCode.UNAVAILABLE, message="the code sandbox is closed")
        if language == "python":
            if self._python is None:
                with self._lock:
                    if self._python is None:
                        from assay.sandbox.python import PythonPool

                        pool = PythonPool(**self._python_options)
                        self._pools.append(pool)
                        self._python = pool
            return self._python
        if language == "nodejs":
            if self._node is None and self._node_problem is None:
                with self._lock:
                    if self._node is None and self._node_problem is None:
                        self._node_problem = self._open_node()
            if self._node_problem:
                return CodeOutcome(error=ErrorCode.UNAVAILABLE, message=self._node_problem)
            return self._node
        return CodeOutcome(error=ErrorCode.INVALID_CONFIG,
                           message=f"unknown language {language!r}: use python or nodejs")

    def _open_node(self) -> str | None:
        try:
            from assay.sandbox.node import NodePool
        except ImportError as exc:
            return f"the Node.js sandbox is not available: {exc}"
        try:
            pool = NodePool(**self._node_options)
        except Exception as exc:  # noqa: BLE001 - Node missing or broken: report, do not crash the run
            return f"the Node.js sandbox could not start: {exc}"
        self._pools.append(pool)
        self._node = pool
        return None

    def close(self) -> None:
        """Stop every pool and the processes they started."""
        self._closed = True
        _close_pools(self._pools)

    def __enter__(self) -> SandboxRunner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _close_pools(pools: list[Any]) -> None:
    while pools:
        pools.pop().close()


def open_code_runner(**options: Any) -> SandboxRunner:
    """Create the process-wide code runner (see ``SandboxRunner`` for the options)."""
    return SandboxRunner(**options)
