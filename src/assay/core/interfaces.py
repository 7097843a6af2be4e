"""The I/O a grader may need, as small interfaces. Real adapters live in sandbox/, judges/;
tests use fakes. Graders receive them through ``Resources``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from assay.core.result import ErrorCode

Language = Literal["python", "nodejs"]


@dataclass(frozen=True, slots=True)
class CodeCall:
    """Call ``function`` defined by ``source`` with JSON ``args``, inside a sandbox."""

    language: Language
    source: str
    args: list[Any]
    function: str = "evaluate"
    timeout_ms: int = 5000
    memory_mb: int = 128


@dataclass(slots=True)
class CodeOutcome:
    """What came back from a sandboxed call: a JSON value, or an error code with a message."""

    value: Any = None
    error: ErrorCode | None = None
    message: str | None = None
    traceback: str | None = None
    duration_ms: float = 0.0
    limits: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.error is None


class CodeRunner(Protocol):
    """Runs untrusted code with OS-level isolation."""

    def call(self, request: CodeCall) -> CodeOutcome: ...

    def check(self, language: Language, source: str, function: str = "evaluate") -> str | None:
        """Return None when ``source`` compiles and defines ``function``; else the problem."""
        ...


@dataclass(slots=True)
class Resources:
    """I/O adapters handed to graders. A grader whose adapter is missing reports ``unavailable``."""

    code_runner: CodeRunner | None = None
    extra: dict[str, Any] = field(default_factory=dict)
