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
