"""Result columns: what a kernel decides (``Graded``), merged with the object path's results
for the rows it left (``Columns``), as Arrow arrays or as GraderResults.

A kernel decides pass or fail for whole columns at once and explains only the rows that need
a reason (usually the failed ones), so the reason column costs little when most rows pass.
Its reasons and details are those the grader itself would give: failures are explained by the
grader module's own wording functions, and reasons are capped as ``Grader.scored_result``
caps them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from assay.core.grader import Grader
from assay.core.result import GraderResult, Status, make_result
from assay.core.untrusted import MAX_REASON, cap_text
from assay.runner.columnar._reasons import Sayer, Worded

STATUSES = [s.value for s in Status]
"""Status codes in the status column's dictionary: passed 0, failed 1, error 2, pending 3."""
_CODE = {s: i for i, s in enumerate(Status)}
_STATUS_TYPE = pa.dictionary(pa.int8(), pa.string())

Explain = Callable[[np.ndarray, bool], tuple[list[str | None] | Worded, list[dict[str, Any]] | None]]
"""``explain(rows, with_details)``: the reason for each of ``rows`` (None where there is none;
a list, or ``Worded`` when built column-wise) and, when ``with_details`` is asked, their
details (None: ``{}`` for each). A reason a grader's phrase says is that phrase (a ``Said``),
so results keep its code."""


@dataclass(slots=True)
class Graded:
    """What a kernel decided about a column: every row passed or failed, except ``undecided``
    rows, which the object path grades."""

    passed: np.ndarray
    """bool per row."""
    explain: Explain
    score: np.ndarray | None = None
    """float64 per row; None means 1.0 where passed, else 0.0."""
    undecided: np.ndarray | None = None
    """bool per row: rows the kernel cannot decide (a value that is not text, a case fold
    Arrow has no kernel for); None when it decided every row."""
    pass_reason: str | None = None
    """The reason every passed row gives (regex checks: "3/3 checks passed"); explain is then
    asked only about the failed rows, and about passed ones only for their details."""
    detailed: np.ndarray | None = None
    """bool per row: passed rows that have details (a regex match); explained only when details
    are asked for."""


@dataclass(slots=True)
class Columns:
    """One grader's results for every row of a table."""

    status: np.ndarray
    """int8 codes into ``STATUSES``."""
    score: np.ndarray
    """float64; NaN where there is no score (error, pending)."""
    reasons: dict[int, str | None] = field(default_factory=dict)
    """Reasons of single rows (sparse); they stand over ``bulk``."""
    bulk_rows: np.ndarray | None = None
    bulk: pa.Array | None = None
    """Reasons built column-wise, for ``bulk_rows`` in order."""
    bulk_said: Sayer | None = None
    """The same reasons as phrases, made when results are built row by row."""
    pass_reason: str | None = None
    """The reason of every passed row not in ``reasons`` (see ``Graded.pass_reason``)."""
    errors: dict[int, str] = field(default_factory=dict)
    details: dict[int, dict[str, Any]] = field(default_factory=dict)
    objects: dict[int, GraderResult] = field(default_factory=dict)
    """Rows graded by the object path: their results as they came."""

    @property
    def passed(self) -> np.ndarray:
        return self.status == 0

    def arrays(self) -> dict[str, pa.Array]:
        """The columns ``status``, ``passed``, ``score``, ``reason``, ``error``."""
        n = len(self.status)
        status = pa.DictionaryArray.from_arrays(pa.array(self.status, pa.int8()), pa.array(STATUSES))
        score = pa.array(self.score, pa.float64(), mask=np.isnan(self.score))
        return {"status": status, "passed": pa.array(self.passed, pa.bool_()), "score": score,
                "reason": self._reason_column(n), "error": _sparse(n, self.errors)}

    def _reason_column(self, n: int) -> pa.Array:
        if self.bulk is None:
            return _sparse(n, self.reasons, self.pass_reason, self.passed)
        strings = pa.concat_arrays([self.bulk.cast(pa.large_string()),
                                    pa.array([*self.reasons.values(), None, self.pass_reason], pa.large_string())])
        index = np.full(n, len(strings) - 2, dtype=np.int64)
        if self.pass_reason is not None:
            index[self.passed] = len(strings) - 1
        index[self.bulk_rows] = np.arange(len(self.bulk))
        if self.reasons:
            keys = np.fromiter(self.reasons.keys(), dtype=np.int64, count=len(self.reasons))
            index[keys] = len(self.bulk) + np.arange(len(keys))
        return strings.take(pa.array(index)).cast(pa.string())

    def results(self, grader: Grader, latency_ms: float = 0.0) -> list[GraderResult]:
        """One GraderResult per row, as the grader's own builders make them."""
        out: list[GraderResult] = []
        name, kind, type_, weight = grader.name, grader.kind, grader.type, grader.weight
        statuses = list(Status)
        reasons, details, objects, pass_reason = self.reasons, self.details, self.objects, self.pass_reason
        if self.bulk is not None and self.bulk_rows is not None:  # set together (_bulk)
            bulk = self.bulk_said() if self.bulk_said is not None else self.bulk.to_pylist()
            reasons = {**dict(zip(self.bulk_rows.tolist(), bulk)), **reasons}
        for i, (code, score) in enumerate(zip(self.status.tolist(), self.score.tolist())):
            r = objects.get(i)
            if r is None:
                status = statuses[code]
                reason = reasons.get(i, pass_reason if code == 0 else None)
                r = make_result(name, type_, kind, status, code == 0, score, reason, details.get(i, {}), None, weight)
            r.__dict__["latency_ms"] = latency_ms
            out.append(r)
        return out


def _sparse(n: int, values: Mapping[int, str | None], default: str | None = None,
            default_rows: np.ndarray | None = None) -> pa.Array:
    """A string column that is null (or ``default`` on ``default_rows``) except at the keys of
    ``values``: the few strings, gathered by index, without a Python object per row."""
    strings: list[str | None] = list(values.values())
    fill = len(strings)
    strings += [None, default]
    index = np.full(n, fill, dtype=np.int64)
    if default is not None and default_rows is not None:
        index[default_rows] = fill + 1
    if values:
        index[np.fromiter(values.keys(), dtype=np.int64, count=len(values))] = np.arange(fill)
    return pa.array(strings, pa.string()).take(pa.array(index))


def assemble(graded: Graded, with_details: bool) -> Columns:
    """Columns from a kernel's decision (undecided rows are filled in by ``merge_objects``)."""
    passed = graded.passed
    decided = passed if graded.undecided is None else passed & ~graded.undecided
    failed = ~passed if graded.undecided is None else ~passed & ~graded.undecided
    status = np.where(passed, 0, 1).astype(np.int8)
    score = graded.score if graded.score is not None else passed.astype(np.float64)
    score = score.astype(np.float64, copy=True)
    cols = Columns(status, score, pass_reason=graded.pass_reason)
    explain = failed
    if with_details and graded.detailed is not None:
        explain = explain | (graded.detailed & decided)
    rows = np.flatnonzero(explain)
    if len(rows):
        reasons, details = graded.explain(rows, with_details)
        if isinstance(reasons, Worded):  # kept as a column; only the too-long ones come back
            long = _bulk(cols, rows, reasons)
            picked: Iterable[int] = range(len(rows)) if details is not None else sorted(long)
            reason_at: Callable[[int], str | None] = long.get
        else:
            picked, reason_at = range(len(rows)), reasons.__getitem__
        row_ids = rows.tolist()
        for k in picked:
            i, reason = row_ids[k], reason_at(k)
            extra = details[k] if details is not None else None
            if reason is not None and len(reason) > MAX_REASON and not (extra and "reason_length" in extra):
                reason, extra = cap_text(reason, MAX_REASON), {**(extra or {}), "reason_length": len(reason)}
            if reason is not None:
                cols.reasons[i] = reason
            if with_details and extra:
                cols.details[i] = extra
    return cols


def _bulk(cols: Columns, rows: np.ndarray, worded: Worded) -> dict[int, str]:
    """Keep column-wise reasons as they are; return, for the per-row path, only the ones too
    long to keep uncut, by their position in ``rows``."""
    reasons = worded.text
    cols.bulk_rows, cols.bulk, cols.bulk_said = rows, reasons, worded.said
    long = pc.fill_null(pc.greater(pc.utf8_length(reasons), MAX_REASON), False).to_numpy(zero_copy_only=False)
    return {k: reasons[k].as_py() for k in np.flatnonzero(long).tolist()}


def merge_objects(cols: Columns, rows: np.ndarray, results: list[GraderResult]) -> None:
    """Put the object path's results for ``rows`` into ``cols``."""
    for i, r in zip(rows.tolist(), results):
        cols.status[i] = _CODE[r.status]
        cols.score[i] = np.nan if r.score is None else r.score
        cols.details.pop(i, None)
        cols.reasons[i] = r.reason  # even None: it stands over a kernel's or the shared reason
        if r.error is not None:
            cols.errors[i] = r.error.value
        if r.details:
            cols.details[i] = r.details
        cols.objects[i] = r


def from_objects(n: int, results: list[GraderResult]) -> Columns:
    """Columns from the object path alone (a grader without a kernel)."""
    cols = Columns(np.zeros(n, dtype=np.int8), np.zeros(n, dtype=np.float64))
    merge_objects(cols, np.arange(n), results)
    return cols
