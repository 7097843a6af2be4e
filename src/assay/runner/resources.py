"""The real I/O adapters, created lazily and shared by a whole process (a CLI run or the service)."""

from __future__ import annotations

import threading
from typing import Any

from assay.core.interfaces import CodeCall, CodeOutcome, Language, Resources, set_source_check


class LazyCodeRunner:
    """Starts the sandbox pool on first use, so suites without code graders never pay for it."""

    def __init__(self, **options: Any) -> None:
        self._options = options
        self._runner: Any = None
        self._lock = threading.Lock()

    def _get(self) -> Any:
        if self._runner is None:
            with self._lock:
                if self._runner is None:
                    from assay.sandbox import open_code_runner

                    self._runner = open_code_runner(**self._options)
        return self._runner

    def call(self, request: CodeCall) -> CodeOutcome:
        return self._get().call(request)

    def check(self, language: Language, source: str, function: str = "evaluate") -> str | None:
        return self._get().check(language, source, function)

    def close(self) -> None:
        if self._runner is not None:
            self._runner.close()
            self._runner = None


def _check_with_sandbox(language: Language, source: str, function: str) -> str | None:
    return default_resources().code_runner.check(language, source, function)


set_source_check(_check_with_sandbox)

_default: Resources | None = None
_default_lock = threading.Lock()


def default_resources() -> Resources:
    """The process-wide resources used by ``assay.grade`` and ``assay run``."""
    global _default
    if _default is None:
        with _default_lock:
            if _default is None:
                from assay.sandbox.process import LocalProcessRunner

                _default = Resources(code_runner=LazyCodeRunner(), process_runner=LocalProcessRunner())
    return _default
