"""What ``POST /execute`` does with one input: grade it with the ``code`` grader on this
service's sandbox, so that ``result`` is validated exactly as a local code evaluator's is, and
shape the answer as the product spec's ``{success, result}`` or ``{success: false, error}``.

Blocking (a sandbox call): the routes run it through ``Admission``, off the event loop.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from dataclasses import replace
from typing import Any

from assay.core.context import Language, SpecContext
from assay.core.errors import SpecError
from assay.core.interfaces import CodeBatch, CodeCall, CodeOutcome, CodeRunner, Resources, call_batch
from assay.core.result import ErrorCode, GraderResult, Status
from assay.core.sample import Sample
from assay.core.spec import CompiledSpec, compile_spec
from assay.runner.execute import grade_many
from assay.sandbox.remote.wire import EvaluatorInput, extras

_COMPILED_CACHE = 256


class SpecEvaluator:
    """Compiles ``{language, code, timeout}`` as a ``code`` grader config (cached: the same
    evaluator usually comes with many inputs) and grades inputs with it through ``runner``.

    ``timeout_max_ms`` caps ``timeout`` as ``ASSAY_CODE_TIMEOUT_MAX_MS`` does for the library.
    """

    def __init__(self, runner: CodeRunner, timeout_max_ms: int) -> None:
        self._runner = runner
        self._context = SpecContext(code_timeout_max_ms=timeout_max_ms)
        self._compiled: OrderedDict[tuple[str, str, int], CompiledSpec | dict[str, Any]] = OrderedDict()
        self._lock = threading.Lock()

    def compile(self, language: Language, code: str, timeout_ms: int) -> CompiledSpec | dict[str, Any]:
        """The compiled evaluator, or the spec's failure answer saying what is wrong with it."""
        key = (language, code, timeout_ms)
        with self._lock:
            found = self._compiled.get(key)
            if found is not None:
                self._compiled.move_to_end(key)
                return found
        try:
            found = compile_spec({"type": "code", "name": "execute",
                                  "config": {"language": language, "code": code, "timeout": timeout_ms}},
                                 context=self._context)
        except SpecError as exc:
            # "config: code: ..." or "config.timeout: ...": the spec's fields are top-level
            found = {"success": False, "error": re.sub(r"^config[.:]\s*", "", exc.message),
                     "errorCode": str(ErrorCode.INVALID_CONFIG)}
        with self._lock:
            self._compiled[key] = found
            if len(self._compiled) > _COMPILED_CACHE:
                self._compiled.popitem(last=False)
        return found

    def execute(self, spec: CompiledSpec, item: EvaluatorInput) -> dict[str, Any]:
        """Grade one input: ``{success: true, result, ...}`` or ``{success: false, error, errorCode, ...}``."""
        return self.execute_many(spec, [item])[0]

    def execute_many(self, spec: CompiledSpec, items: list[EvaluatorInput], spread: int = 0) -> list[dict[str, Any]]:
        """Grade inputs in one sandbox batch (``/execute/batch``; ``/execute`` is a batch of one):
        each input under the evaluator's limits, the answers in order, on at most ``spread`` of
        the sandbox's workers at once (0: every worker; ``CodeBatch.spread``)."""
        recorder = _Recording(self._runner, spread)
        samples = [Sample(id=str(i), input=item.input, output=item.output, expected=item.expected,
                          metadata=item.metadata) for i, item in enumerate(items)]
        graded = grade_many(spec.build(Resources(code_runner=recorder)), samples)
        outcomes = recorder.outcomes
        if len(outcomes) != len(items):  # the batch raised and was graded again sample by sample
            outcomes = outcomes[-len(items):] if len(outcomes) > len(items) else [CodeOutcome()] * len(items)
        return [answer(g, o) for g, o in zip(graded, outcomes)]


def answer(graded: GraderResult, outcome: CodeOutcome) -> dict[str, Any]:
    """The spec's answer for a ``code`` grader's result, with the sandbox's report as assay's fields.

    A graded result carries the verdict and score as the grader settled them, and ``reason``
    and ``details`` as ``evaluate`` returned them (the grader found them valid): a client's
    own ``code`` grader then caps and files them exactly as it would a local evaluation's."""
    fields = extras(outcome)
    if graded.status is Status.ERROR:
        said = {} if graded.reason_code is None else {"errorPhrase": {"code": graded.reason_code,
                                                                      "args": graded.reason_args}}
        return {"success": False, "error": graded.reason or "evaluation failed",
                "errorCode": str(graded.error or ErrorCode.RUNTIME_ERROR), **said, **fields}
    value = outcome.value if isinstance(outcome.value, dict) else {}
    result = {"passed": graded.passed, "score": graded.score, "reason": value.get("reason"),
              "details": value.get("details") or {}}
    return {"success": True, "result": result, **fields}


class _Recording:
    """The service's runner, keeping the outcomes of the calls a ``code`` grader makes; its
    batches go to at most ``spread`` workers at once when that is not 0."""

    def __init__(self, runner: CodeRunner, spread: int = 0) -> None:
        self._runner = runner
        self._spread = spread
        self.outcomes: list[CodeOutcome] = []

    def call(self, request: CodeCall) -> CodeOutcome:
        self.outcomes.append(self._runner.call(request))
        return self.outcomes[-1]

    def call_batch(self, batch: CodeBatch) -> list[CodeOutcome]:
        got = call_batch(self._runner, replace(batch, spread=self._spread) if self._spread else batch)
        self.outcomes += got
        return got

    def check(self, language: Language, source: str, function: str = "evaluate") -> str | None:
        return self._runner.check(language, source, function)
