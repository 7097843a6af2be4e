"""Making values storable in every supported database. PostgreSQL refuses the NUL character
(U+0000) in text and JSONB; SQLite does not.

Graded text (a result's reason and details, an evaluator's config, a run's snapshot and error)
keeps its NULs on both: on PostgreSQL, ``NulSafeText`` and ``NulSafeJson`` columns store each NUL
as U+FFFF followed by ``0`` (and a U+FFFF of the text itself as U+FFFF ``1``, so the escape reads
back exactly) and restore them when read; SQLite stores the text as it is. Writers that bypass
the column types (the results' ``COPY``) call ``escape`` themselves. Dataset rows are JSON text,
where a NUL is already written ``\\u0000``.

Names and ids, where the API refuses a NUL (``NoNul``), are made ``storable`` instead: a NUL that
reaches them another way (the command line) becomes U+FFFD.
"""

from __future__ import annotations

import re
from typing import Any

from sqlalchemy import JSON, Dialect, Text
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.types import TypeDecorator, TypeEngine

MARK = "\uffff"
"""The escape character: a Unicode noncharacter, which no text means to hold."""
_ESCAPED = re.compile(MARK + "([01])")


def storable(value: Any) -> Any:
    """``value`` with every NUL character in its strings (keys too) replaced by U+FFFD."""
    if isinstance(value, str):
        return value.replace("\x00", "\ufffd") if "\x00" in value else value
    if isinstance(value, dict):
        return {storable(k): storable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [storable(v) for v in value]
    return value


def escape(value: Any) -> Any:
    """``value`` with NULs (and U+FFFF) in its strings, keys too, escaped for PostgreSQL; values
    without either are returned as they are (the same object)."""
    if isinstance(value, str):
        if "\x00" not in value and MARK not in value:
            return value
        return value.replace(MARK, MARK + "1").replace("\x00", MARK + "0")
    if isinstance(value, dict):
        return {escape(k): escape(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [escape(v) for v in value]
    return value


def restore(value: Any) -> Any:
    """The inverse of ``escape``."""
    if isinstance(value, str):
        return _ESCAPED.sub(_unescape, value) if MARK in value else value
    if isinstance(value, dict):
        return {restore(k): restore(v) for k, v in value.items()}
    if isinstance(value, list):
        return [restore(v) for v in value]
    return value


def _unescape(match: re.Match[str]) -> str:
    return "\x00" if match.group(1) == "0" else MARK


class NulSafeText(TypeDecorator[str]):
    """Text that keeps its NULs on PostgreSQL too (escaped in storage, restored when read)."""

    impl = Text
    cache_ok = True

    def process_bind_param(self, value: str | None, dialect: Dialect) -> str | None:
        return escape(value) if value is not None and dialect.name == "postgresql" else value

    def process_result_value(self, value: str | None, dialect: Dialect) -> str | None:
        return restore(value) if value is not None and dialect.name == "postgresql" else value


class NulSafeJson(TypeDecorator[Any]):
    """JSON (JSONB on PostgreSQL) whose strings keep their NULs on PostgreSQL too."""

    impl = JSON
    cache_ok = True

    def load_dialect_impl(self, dialect: Dialect) -> TypeEngine[Any]:
        return dialect.type_descriptor(JSONB() if dialect.name == "postgresql" else JSON())

    def process_bind_param(self, value: Any, dialect: Dialect) -> Any:
        return escape(value) if dialect.name == "postgresql" else value

    def process_result_value(self, value: Any, dialect: Dialect) -> Any:
        return restore(value) if dialect.name == "postgresql" else value
