"""A trial of a stored evaluator on one sample: the work of ``POST /evaluators/{id}/test`` that
the route (``routes/evaluators.py``) and the fast path in front of the framework
(``server/fast_test.py``) share, so both build the same sample, grade it the same way and
answer with the same bytes."""

from __future__ import annotations

from typing import Any

from starlette.responses import Response

from assay.core.grader import Grader
from assay.core.result import ErrorCode, GraderResult
from assay.core.sample import Sample
from assay.server.errors import EVALUATOR_EXECUTION_FAILED, ApiError
from assay.server.grading import Grading
from assay.server.schemas.common import envelope_response
from assay.server.schemas.evaluators import TestRequest, TestResult


def sample_of(body: TestRequest) -> Sample:
    """The sample a test request describes."""
    return Sample(id="test", input=body.input, output=body.output, expected=body.expected, metadata=body.metadata)


def grade_inline(grading: Grading, grader: Grader[Any], sample: Sample) -> GraderResult | None:
    """The grade, when ``Grading.runs_inline`` says it is cheap enough for the event loop; None
    when it must be graded elsewhere (the threadpool, the sandbox)."""
    return grading.grade(grader, sample) if grading.runs_inline(grader, sample) else None


def answer(result: GraderResult) -> Response:
    """``{code: 200, data: TestResult}``; ApiError 503 (503002) when the evaluator could not run
    at all (its sandbox or judge is unavailable), which is not the evaluator's own error."""
    if result.error == ErrorCode.UNAVAILABLE:
        raise ApiError(503, f"evaluator execution failed: {result.reason}", EVALUATOR_EXECUTION_FAILED)
    return envelope_response(TestResult(passed=result.passed, score=result.score, reason=result.reason,
                                        latency_ms=round(result.latency_ms, 3),
                                        error=None if result.error is None else str(result.error),
                                        status=str(result.status), details=result.details))
