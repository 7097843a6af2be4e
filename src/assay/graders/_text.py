"""Helpers shared by the text graders."""

from __future__ import annotations

from typing import Any

import orjson


def as_text(value: Any) -> str:
    """A sample field as text: strings unchanged, None as '', other JSON values as compact JSON."""
    if isinstance(value, str):
        return value
    if value is None:
        return ""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


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
