"""A trial of an evaluator on one sample: the work that the three test entries share, so they
build the same sample, grade it the same way and answer with the same bytes and errors:

- ``POST /api/v1/evaluators/{id}/test`` (``routes/evaluators.py``);
- its fast path in front of the framework (``server/fast_test.py``), which answers only what
  ``grade_inline`` grades;
- the editor's draft test, ``POST /pages/api/evaluators/test`` (``pages/api.py``).
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from assay.core.grader import Grader
from assay.core.messages import Phrase, said_again
from assay.core.result import ErrorCode, GraderResult
from assay.core.sample import Sample
from assay.server.errors import EVALUATOR_EXECUTION_FAILED, ApiError
from assay.server.schemas.common import envelope_response
from assay.server.schemas.evaluators import TestRequest, TestResult
from assay.service.fairness import as_user
from assay.service.grading import Grading
from assay.settings import Settings

CODE_TOO_LARGE = Phrase("api.code_too_large", "config.code: {size} bytes; the limit is {limit} "
                                              "(ASSAY_API_MAX_CODE_BYTES)")
FAILED = Phrase("api.execution_failed", "evaluator execution failed: {reason}")


def sample_of(body: TestRequest) -> Sample:
    """The sample a test request describes."""
    return Sample(id="test", input=body.input, output=body.output, expected=body.expected, metadata=body.metadata)


def grade_inline(grading: Grading, grader: Grader[Any], sample: Sample) -> GraderResult | None:
    """The grade, when ``Grading.runs_inline`` says it is cheap enough for the event loop; None
    when it must be graded elsewhere (the threadpool, the sandbox)."""
    return grading.grade(grader, sample) if grading.runs_inline(grader, sample) else None


async def grade(grading: Grading, grader: Grader[Any], sample: Sample, user_id: str) -> tuple[GraderResult, float]:
    """The grade: inline when cheap, a code evaluator's through the coalescer (this user's
    concurrent tests share sandbox batches, and users take turns), anything else in the
    threadpool; and the milliseconds the trial spent besides the grade's own ``latency_ms``
    (waiting for a sandbox worker or a thread, behind other tests and runs), for ``answer``."""
    result = grade_inline(grading, grader, sample)
    if result is not None:
        return result, 0.0
    began = time.perf_counter()
    if grader.traits.batches_io:
        result = await grading.coalescer.grade(user_id, grader, sample)
    else:
        result = await run_in_threadpool(as_user, user_id, grading.grade, grader, sample)
    return result, max(0.0, (time.perf_counter() - began) * 1000 - result.latency_ms)


def check_code_size(settings: Settings, evaluator_type: str, config: Mapping[str, Any]) -> None:
    """ApiError 413 when a code evaluator's source is over ``ASSAY_API_MAX_CODE_BYTES``."""
    code = config.get("code") if evaluator_type == "code" else None
    if not isinstance(code, str):
        return
    size, limit = len(code.encode("utf-8", "surrogatepass")), settings.api_max_code_bytes
    if size > limit:
        raise ApiError(413, CODE_TOO_LARGE(size=f"{size:,}", limit=f"{limit:,}"))


def answer(result: GraderResult, wait_ms: float = 0.0) -> Response:
    """``{code: 200, data: TestResult}``; ApiError 503 (503002) when the evaluator could not run
    at all (its sandbox or judge is unavailable), which is not the evaluator's own error.
    ``wait_ms``: the time besides the evaluation's own (``grade``), reported apart from it."""
    if result.error == ErrorCode.UNAVAILABLE:
        said = said_again(result.reason or "", result.reason_code, result.reason_args)
        raise ApiError(503, FAILED(reason=said), EVALUATOR_EXECUTION_FAILED)
    return envelope_response(TestResult(passed=result.passed, score=result.score, reason=result.reason,
                                        reason_code=result.reason_code, reason_args=result.reason_args,
                                        latency_ms=round(result.latency_ms, 3), wait_ms=round(wait_ms, 3),
                                        error=None if result.error is None else str(result.error),
                                        status=result.status, details=result.details))
