"""The I/O a grader may need, as small interfaces. Real adapters live in sandbox/, judges/;
tests use fakes. Graders receive them through ``Resources``. (The judge interface is in
``core.judge``.)"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from assay.core.context import Language
from assay.core.judge import JudgeClient
from assay.core.result import ErrorCode


@dataclass(frozen=True, slots=True)
class CodeCall:
    """Call ``function`` defined by ``source`` with JSON ``args``, inside a sandbox."""

    language: Language
    source: str
    args: list[Any]
    function: str = "evaluate"
    timeout_ms: int = 5000
    memory_mb: int = 128


@dataclass(frozen=True, slots=True)
class CodeBatch:
    """One evaluator called once per sample: ``function`` of ``source`` with each entry of
    ``args`` (one argument list per sample). The limits hold per sample, not per batch.

    A batch only ever holds one evaluator's calls: the sandboxes may run a chunk of it in one
    process (Python) or one isolate call (Node.js), with fresh module globals or a fresh
    context per sample, so what one sample's code leaves behind can at most reach a later
    sample of the same evaluator (the README's "Code evaluators", *Batches*)."""

    language: Language
    source: str
    args: list[list[Any]]
    function: str = "evaluate"
    timeout_ms: int = 5000
    memory_mb: int = 128
    spread: int = 0
    """At most this many of the sandbox's workers run the batch at once (0: every worker): a
    user's cap on evaluations in flight holds inside one batch (``service.fairness``)."""

    def calls(self) -> Iterator[CodeCall]:
        """The batch as single calls, in order."""
        for args in self.args:
            yield CodeCall(self.language, self.source, args, self.function, self.timeout_ms, self.memory_mb)


@dataclass(slots=True)
class CodeOutcome:
    """What came back from a sandboxed call: a JSON value, or an error code with a message."""

    value: Any = None
    error: ErrorCode | None = None
    message: str | None = None
    traceback: str | None = None
    output: str | None = None
    """What the code printed (stdout and stderr), capped: the first lines a user debugs with."""
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


def call_batch(runner: CodeRunner, batch: CodeBatch) -> list[CodeOutcome]:
    """One outcome per sample of ``batch``, in order: through the runner's own ``call_batch``
    when it has one (the sandboxes do), else one ``call`` at a time."""
    batched = getattr(runner, "call_batch", None)
    if batched is not None:
        return batched(batch)
    return [runner.call(call) for call in batch.calls()]


DEFAULT_STDOUT_LIMIT = 1 << 20
DEFAULT_STDERR_LIMIT = 64 << 10


@dataclass(frozen=True, slots=True)
class ProcessCall:
    """One child process to run.

    ``argv`` is executed directly, or, with ``shell``, joined by spaces and given to
    ``/bin/sh -c`` (the way Node's ``spawn(cmd, args, {shell: true})`` does it). ``env`` is set
    over the environment the runner passes on (the settings' ``environ``: the process's own), or,
    with ``scrub_env``, over only its ``PATH``, ``HOME``, ``LANG`` and ``TMPDIR``.
    """

    argv: list[str]
    cwd: str
    env: dict[str, str]
    timeout_s: float
    shell: bool = False
    scrub_env: bool = False
    stdin: bytes | None = None
    stdout_limit: int = DEFAULT_STDOUT_LIMIT
    stderr_limit: int = DEFAULT_STDERR_LIMIT


@dataclass(slots=True)
class ProcessOutcome:
    """What happened. ``spawn_error`` names the errno (``ENOENT``) when the program could
    not start; ``returncode`` is negative for a signal (POSIX convention)."""

    returncode: int | None = None
    stdout: bytes = b""
    stdout_truncated: bool = False
    stderr: bytes = b""
    stderr_truncated: bool = False
    timed_out: bool = False
    spawn_error: str | None = None
    spawn_message: str | None = None
    duration_ms: float = 0.0
    argv: list[str] = field(default_factory=list)

    def stderr_text(self, limit: int = 4000) -> str:
        """The last ``limit`` characters of stderr, decoded leniently."""
        text = self.stderr.decode("utf-8", errors="replace")
        return text[-limit:]


class ProcessRunner(Protocol):
    """Runs trusted operator programs (``program`` and ``script`` graders) under a time limit."""

    def run(self, call: ProcessCall) -> ProcessOutcome: ...


@dataclass(slots=True)
class Resources:
    """I/O adapters handed to graders. A grader whose adapter is missing reports ``unavailable``."""

    code_runner: CodeRunner | None = None
    process_runner: ProcessRunner | None = None
    judge_client: JudgeClient | None = None
    extra: dict[str, Any] = field(default_factory=dict)
