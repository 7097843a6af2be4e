"""``regex`` over columns: Arrow's RE2 kernel (``match_substring_regex``) per pattern.

A pattern the grader runs on RE2 is handed to Arrow's RE2 as the grader compiled it (its
JavaScript flags already turned into an inline prefix, ``\\u{...}`` escapes translated), with
the same options (UTF-8, case-sensitive unless the prefix says otherwise, leftmost-first), so
both find the same matches. A pattern that needs the backtracking engine (backreferences,
lookaround, with its time bound) has no kernel: that grader takes the object path. Details
(the matched text and span) are computed only when asked for (``assay run``), with the
grader's own search, for the rows that matched.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from assay.graders.regex import (
    CHECKS_PASSED,
    NO_MATCH,
    CompiledPattern,
    Regex,
    RegexConfig,
    check_row,
    checks_reason,
    failure,
    match_details,
    shown,
)
from assay.runner.columnar._columns import Graded
from assay.runner.columnar._frame import Frame, take_text


def applies(config: RegexConfig) -> bool:
    """True when every pattern of the config runs on RE2."""
    return all(check.pattern.re2_source is not None for check in config.checks)


def grade(grader: Regex, frame: Frame, *, workers: int = 1) -> Graded | None:
    checks = grader.config.checks
    texts = frame.filled("output")
    if texts is None or not applies(grader.config):
        return None
    try:
        found = [pc.match_substring_regex(texts, c.pattern.re2_source).to_numpy(zero_copy_only=False)
                 for c in checks]
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):  # Arrow's RE2 refuses what the grader's took
        return None
    if len(checks) == 1 and checks[0].must_match:
        return _single(frame, checks[0].pattern, found[0], texts)
    oks = [f if c.must_match else ~f for c, f in zip(checks, found)]
    count = np.sum(oks, axis=0)
    passed = count == len(checks)

    def explain(rows: np.ndarray, with_details: bool) -> tuple[list[str | None], list[dict[str, Any]] | None]:
        reasons: list[str | None] = []
        details: list[dict[str, Any]] = []
        for i in rows.tolist():
            results = [(c, bool(f[i]), bool(ok[i])) for c, f, ok in zip(checks, found, oks)]
            failures = [failure(c.pattern, c.must_match) for c, _, ok in results if not ok]
            reasons.append(checks_reason(failures, len(results) - len(failures), len(results)))
            if with_details:
                details.append({"checks": [check_row(c.pattern, c.must_match, m, ok) for c, m, ok in results]})
        return reasons, details if with_details else None

    n = len(checks)
    return Graded(passed, explain, score=count / n, pass_reason=CHECKS_PASSED(passed=n, total=n),
                  detailed=passed)


def _single(frame: Frame, pat: CompiledPattern, matched: np.ndarray, texts: pa.Array) -> Graded:
    no_match = NO_MATCH(pattern=shown(pat))

    def explain(rows: np.ndarray, with_details: bool) -> tuple[list[str | None], list[dict[str, Any]] | None]:
        hits = matched[rows]
        reasons: list[str | None] = [None if hit else no_match for hit in hits.tolist()]
        if not with_details:
            return reasons, None
        details: list[dict[str, Any]] = [{} for _ in reasons]
        where = np.flatnonzero(hits)
        for k, m in zip(where.tolist(), pat.search_many(take_text(texts, rows[where]))):
            if m is not None:
                details[k] = match_details(m.text, m.start, m.end)
        return reasons, details

    return Graded(matched, explain, detailed=matched)
