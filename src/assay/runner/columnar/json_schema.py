"""``json_schema`` over columns: orjson parses each output, jsonschema-rs checks it.

This kernel needs a Python value per row (jsonschema-rs validates Python values); what it
spares is the Sample and the result object per row. Failed rows are explained by the grader
itself (``json_schema.violations``): the same messages, paths and details. Outputs are parsed
from the column's bytes (no Python string per row; orjson words an error the same for both).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import orjson
import pyarrow as pa

from assay.core.messages import Said
from assay.graders.json_schema import NOT_JSON, JsonSchema, violations
from assay.runner.columnar._columns import Graded
from assay.runner.columnar._frame import Frame, text_buffers, valid


def grade(grader: JsonSchema, frame: Frame, *, workers: int = 1) -> Graded | None:
    texts = frame.text("output")
    if texts is None:
        return None
    is_valid = grader.config.validator.is_valid
    loads, bad_json = orjson.loads, orjson.JSONDecodeError
    n = frame.n
    passed = np.zeros(n, dtype=bool)
    undecided = np.zeros(n, dtype=bool)
    not_json: dict[int, Said] = {}
    docs: dict[int, Any] = {}
    for i, raw in enumerate(_raw_values(texts)):
        try:
            doc = None if raw is None else loads(raw)
        except bad_json as exc:  # the same message as for the text (positions in characters)
            not_json[i] = NOT_JSON(problem=str(exc))
            continue
        try:
            if is_valid(doc):
                passed[i] = True
            else:
                docs[i] = doc
        except (ValueError, TypeError, OverflowError):  # the grader's error result: the object path
            undecided[i] = True

    def explain(rows: np.ndarray, with_details: bool) -> tuple[list[str | None], list[dict[str, Any]]]:
        reasons: list[str | None] = []
        details: list[dict[str, Any]] = []
        validator = grader.config.validator
        for i in rows.tolist():
            if i in not_json:
                reasons.append(not_json[i])
                details.append({})
            else:
                reason, detail = violations(validator, docs[i])
                reasons.append(reason)
                details.append(detail)
        return reasons, details

    return Graded(passed, explain, undecided=undecided if undecided.any() else None)


def _raw_values(texts: pa.LargeStringArray) -> Iterator[memoryview | None]:
    """Each row's UTF-8 bytes as a view of the column's data buffer (None for a null)."""
    offsets, data, start, n = text_buffers(texts)
    ends = np.frombuffer(offsets, dtype=np.int64)[start:start + n + 1].tolist()
    view = memoryview(data)
    present = valid(texts).tolist() if texts.null_count else None
    for i, (begin, end) in enumerate(zip(ends, ends[1:])):
        yield view[begin:end] if present is None or present[i] else None
