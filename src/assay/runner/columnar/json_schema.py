"""``json_schema`` over columns: orjson parses each output, jsonschema-rs checks it.

This kernel needs a Python value per row (jsonschema-rs validates Python values); what it
spares is the Sample and the result object per row. Failed rows are explained by the grader
itself (``JsonSchema._violations``): the same messages, paths and details.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import orjson

from assay.graders.json_schema import JsonSchema
from assay.runner.columnar._columns import Graded
from assay.runner.columnar._frame import Frame


def grade(grader: JsonSchema, frame: Frame) -> Graded | None:
    texts = frame.text("output")
    if texts is None:
        return None
    is_valid = grader.config.validator.is_valid
    loads, bad_json = orjson.loads, orjson.JSONDecodeError
    n = frame.n
    passed = np.zeros(n, dtype=bool)
    undecided = np.zeros(n, dtype=bool)
    not_json: dict[int, str] = {}
    docs: dict[int, Any] = {}
    for i, raw in enumerate(texts.to_pylist()):
        try:
            doc = None if raw is None else loads(raw)
        except bad_json as exc:
            not_json[i] = f"output is not valid JSON: {exc}"
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
                r = grader._violations(validator, docs[i])
                reasons.append(r.reason)
                details.append(r.details)
        return reasons, details

    return Graded(passed, explain, undecided=undecided if undecided.any() else None)
