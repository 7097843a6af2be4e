"""Helpers shared by the text graders."""

from __future__ import annotations

from typing import Any

import orjson

from assay.core.messages import Phrase, Said
from assay.core.untrusted import MAX_DEPTH, TooDeep, clean_json, clean_text

_SORTED = orjson.OPT_SORT_KEYS

# JSON kinds as reasons name them (with their article), and a value shown with its kind.
NULL = Phrase("json.null", "null")
BOOLEAN = Phrase("json.boolean", "a boolean")
NUMBER = Phrase("json.number", "a number")
STRING = Phrase("json.string", "a string")
OBJECT = Phrase("json.object", "an object")
ARRAY = Phrase("json.array", "an array")
OTHER = Phrase("json.other", "a {name}")
SHOWN = Phrase("json.shown", "{kind} ({shown})")
TOO_DEEP = Phrase("text.too_deep", "cannot compare: a value is nested more than {depth} levels deep")
"""The reason of a sample whose output or expected value nests past ``MAX_DEPTH``."""


def too_deep() -> Said:
    return TOO_DEEP(depth=MAX_DEPTH)


def as_text(value: Any) -> str:
    """A sample field as text: strings unchanged, None as '', other JSON values as compact JSON
    with sorted keys.

    Values plain JSON cannot hold (integers past 64 bits, sets, non-text keys, lone surrogates,
    other objects) are first made writable by ``core.untrusted.clean_json``. Raises ``TooDeep``
    when the value nests deeper than ``core.untrusted.MAX_DEPTH``.
    """
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    try:
        return orjson.dumps(value, option=_SORTED).decode()
    except TypeError:  # orjson.JSONEncodeError
        return orjson.dumps(clean_json(value), option=_SORTED).decode()


def json_kind(value: Any) -> Said:
    """The JSON type of a value, with its article: ``a string``, ``a number``, ``null``."""
    if value is None:
        return NULL()
    if isinstance(value, bool):
        return BOOLEAN()
    if isinstance(value, (int, float)):
        return NUMBER()
    if isinstance(value, str):
        return STRING()
    if isinstance(value, dict):
        return OBJECT()
    if isinstance(value, (list, tuple)):
        return ARRAY()
    return OTHER(name=type(value).__name__)


def describe(value: Any, limit: int = 60) -> Said:
    """``a number (42)``, ``a string ("42")``: a value's JSON type and a short JSON rendering."""
    kind = json_kind(value)
    if value is None:
        return kind
    if isinstance(value, str):
        return SHOWN(kind=kind, shown=orjson.dumps(clean_text(preview(value, limit))).decode())
    try:
        shown = preview(as_text(value), limit)
    except TooDeep:
        shown = "…"
    return SHOWN(kind=kind, shown=shown)


def preview(text: str, limit: int = 120) -> str:
    """Shorten text for a reason line."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def common_prefix_length(a: str, b: str) -> int:
    """Index of the first differing character.

    Most differences come early, so the first characters are compared one by one; past them
    the search gallops, then bisects, over C-level slice comparisons.
    """
    n = min(len(a), len(b))
    head = min(n, 8)
    for i in range(head):
        if a[i] != b[i]:
            return i
    lo, step = head, 16
    while lo + step < n and a[lo:lo + step] == b[lo:lo + step]:
        lo += step
        step *= 4
    hi = min(n, lo + step)
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo
