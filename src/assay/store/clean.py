"""Making values storable in every supported database: PostgreSQL refuses the NUL character
in text and JSONB (SQLite does not), so it is replaced by U+FFFD everywhere, for one behaviour
on both."""

from __future__ import annotations

from typing import Any


def storable(value: Any) -> Any:
    """``value`` with every NUL character in its strings (keys too) replaced by U+FFFD."""
    if isinstance(value, str):
        return value.replace("\x00", "\ufffd") if "\x00" in value else value
    if isinstance(value, dict):
        return {storable(k): storable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [storable(v) for v in value]
    return value
