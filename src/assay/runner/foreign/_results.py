"""What both foreign readers build: one grader result from a peer's verdict on one sample, and
the error results that stand for graders that never ran."""

from __future__ import annotations

import math
from typing import Any

from assay.core.result import ErrorCode, GraderResult, Kind, Status, make_result
from assay.core.untrusted import cap_text


def graded(name: str, type_: str, kind: Kind, passed: bool, score: float | None, reason: Any,
           weight: float = 1.0, details: dict[str, Any] | None = None) -> GraderResult:
    """A passed or failed result; a score outside [0, 1] is clamped into it (the peer's own
    value kept in ``details.peer_score``), since assay's scores are fractions."""
    extra = dict(details or {})
    if score is not None and not 0.0 <= score <= 1.0:
        extra["peer_score"] = score
        score = min(1.0, max(0.0, score))
    status = Status.PASSED if passed else Status.FAILED
    return make_result(name, type_, kind, status, passed, score, _reason(reason), extra, None, weight)


def errored(name: str, type_: str, kind: Kind, reason: Any, code: ErrorCode = ErrorCode.RUNTIME_ERROR,
            weight: float = 1.0) -> GraderResult:
    """An error result: the peer could not grade this sample (its model call or solver failed)."""
    return make_result(name, type_, kind, Status.ERROR, False, None, _reason(reason), {}, code, weight)


def number(value: Any) -> float | None:
    """A finite number as a float, else None (booleans are not numbers here)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def obj(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one (a peer's optional object field)."""
    return value if isinstance(value, dict) else {}


def text(value: Any) -> str | None:
    """``value`` when it is non-empty text, else None."""
    return value if isinstance(value, str) and value else None


def weight_of(value: Any) -> float:
    """A peer's weight when it is a number of at least 0, else 1."""
    got = number(value)
    return got if got is not None and got >= 0 else 1.0


def _reason(reason: Any) -> str | None:
    if reason is None or reason == "":
        return None
    return cap_text(reason if isinstance(reason, str) else str(reason))
