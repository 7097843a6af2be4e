"""In-memory fakes of the core I/O interfaces (``CodeRunner``, ``ProcessRunner``,
``JudgeClient``), one beside each real adapter, as httpx keeps a mock transport beside its real
ones: for plugin authors testing their graders, and for assay's own tests (through the fixtures
in ``tests/conftest.py``). Each fake records the calls it received::

    from assay.core.interfaces import Resources
    from assay.testing import FakeProcessRunner

    runner = FakeProcessRunner()
    spec.build(Resources(process_runner=runner)).grade(sample)
    assert runner.calls[0].argv == ["my-grader"]
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from assay.core.interfaces import CodeCall, CodeOutcome, ProcessCall, ProcessOutcome

__all__ = ["FakeCodeRunner", "FakeJudgeClient", "FakeProcessRunner"]


class FakeCodeRunner:
    """A ``CodeRunner`` answering every call with ``outcome`` (or ``respond(call)``)."""

    def __init__(self, outcome: CodeOutcome | None = None,
                 respond: Callable[[CodeCall], CodeOutcome] | None = None,
                 problem: str | None = None) -> None:
        self.outcome = outcome or CodeOutcome(value={"passed": True})
        self.respond = respond
        self.problem = problem
        """What ``check`` answers: the problem with the source, or None."""
        self.calls: list[CodeCall] = []
        self.checks: list[tuple[str, str, str]] = []

    def call(self, request: CodeCall) -> CodeOutcome:
        self.calls.append(request)
        return self.respond(request) if self.respond is not None else self.outcome

    def check(self, language: Any, source: str, function: str = "evaluate") -> str | None:
        self.checks.append((language, source, function))
        return self.problem


class FakeProcessRunner:
    """A ``ProcessRunner`` answering every run with ``outcome`` (or ``respond(call)``)."""

    def __init__(self, outcome: ProcessOutcome | None = None,
                 respond: Callable[[ProcessCall], ProcessOutcome] | None = None) -> None:
        self.outcome = outcome or ProcessOutcome(returncode=0)
        self.respond = respond
        self.calls: list[ProcessCall] = []

    def run(self, call: ProcessCall) -> ProcessOutcome:
        self.calls.append(call)
        return self.respond(call) if self.respond is not None else self.outcome


class FakeJudgeClient:
    """A ``JudgeClient`` answering from a script: ``respond(request) -> JudgeReply`` or a list of
    replies served in turn (the last one repeats). Records every request."""

    def __init__(self, replies: Any = None) -> None:
        from assay.core.judge import JudgeReply

        self.replies = replies if replies is not None else [JudgeReply(text='{"score": 5, "reasoning": "ok"}')]
        self.requests: list[Any] = []

    def judge(self, request: Any) -> Any:
        self.requests.append(request)
        if callable(self.replies):
            return self.replies(request)
        index = min(len(self.requests) - 1, len(self.replies) - 1)
        return self.replies[index]

    def judge_many(self, requests: Any) -> list[Any]:
        return [self.judge(r) for r in requests]
