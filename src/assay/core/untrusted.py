"""Values from outside (evaluator code, programs, datasets) made safe to keep and to write.

Whatever an evaluator returns or a dataset holds is normalised once, where it enters, so that
every writer (JSONL, JUnit XML, exports, the API) can write it:

- text: lone surrogates (from ``"\\ud800"`` escapes or YAML) become U+FFFD;
- numbers: NaN and the infinities become the strings ``"NaN"``, ``"Infinity"``,
  ``"-Infinity"``; integers beyond 64 bits become their decimal text (JSON writers
  cannot hold them and a float would round them silently);
- structure: nesting deeper than ``MAX_DEPTH`` is refused with ``TooDeep``.

Reasons are capped at ``MAX_REASON`` characters with an ellipsis and the full length.
Control characters stay in values (JSON escapes them); the XML writer replaces the ones
XML 1.0 cannot hold.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from assay.core.errors import AssayError

MAX_REASON = 4096
"""Characters of a result's ``reason`` kept; the rest is cut with an ellipsis."""
MAX_DEPTH = 100
"""Deepest nesting of lists and objects accepted from outside."""

_INT_MIN, _INT_MAX = -(2**63), 2**64 - 1  # what JSON writers (orjson) can hold exactly
_SURROGATE = re.compile("[\ud800-\udfff]")
_XML_BAD = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


class TooDeep(AssayError, ValueError):
    """A value nested deeper than ``MAX_DEPTH``."""


def clean_text(text: str) -> str:
    """``text`` with lone surrogates replaced by U+FFFD (valid pairs are joined)."""
    if _SURROGATE.search(text) is None:
        return text
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def cap_text(text: str, limit: int = MAX_REASON) -> str:
    """``text`` cut to ``limit`` characters, saying how long it was."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… [{len(text)} characters in all]"


def xml_text(text: str) -> str:
    """``text`` with the characters XML 1.0 cannot hold replaced by U+FFFD."""
    return _XML_BAD.sub("\ufffd", text)


def clean_number(value: float | int) -> float | int | str:
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if _INT_MIN <= value <= _INT_MAX:
        return value
    return str(value)


def clean_json(value: Any, *, max_depth: int = MAX_DEPTH) -> Any:
    """A copy of ``value`` that every JSON writer accepts (see the module docstring).

    Mappings become dicts with text keys, tuples and sets become lists, and any other object
    becomes its ``str``. Raises ``TooDeep`` when nesting exceeds ``max_depth``.
    """
    return _clean(value, max_depth)


def _clean(value: Any, depth: int) -> Any:
    if value is None or value is True or value is False:
        return value
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, (int, float)):
        return clean_number(value)
    if depth <= 0:
        raise TooDeep(f"nested more than {MAX_DEPTH} levels deep")
    if isinstance(value, Mapping):
        return {clean_text(str(k)): _clean(v, depth - 1) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_clean(v, depth - 1) for v in value]
    return clean_text(str(value))
