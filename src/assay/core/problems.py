"""Validation problems as phrases (``core.messages``): what pydantic found wrong with a field,
said so that the pages can say it in their language.

Pydantic writes its messages in English; the common kinds (a field missing, a number out of
range, a text too long, a wrong type) get a phrase here with pydantic's own text as the
English and its context as the values. A validator's ``ValueError`` keeps the phrase it was
raised with (``raise ValueError(SOME_PHRASE(...))``). Any other problem stays as pydantic
wrote it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from assay.core.messages import Phrase, Said

AT = Phrase("problem.at", "{path}: {problem}")
"""A problem at a field path: ``config.timeout: Input should be ...``."""
UNKNOWN_FIELD = Phrase("problem.extra_forbidden", "unknown field (not allowed here)")

_BY_TYPE = {phrase.code.removeprefix("problem."): phrase for phrase in (
    Phrase("problem.missing", "Field required"),
    Phrase("problem.string_type", "Input should be a valid string"),
    Phrase("problem.int_type", "Input should be a valid integer"),
    Phrase("problem.int_parsing", "Input should be a valid integer, unable to parse string as an integer"),
    Phrase("problem.int_from_float", "Input should be a valid integer, got a number with a fractional part"),
    Phrase("problem.float_type", "Input should be a valid number"),
    Phrase("problem.float_parsing", "Input should be a valid number, unable to parse string as a number"),
    Phrase("problem.bool_type", "Input should be a valid boolean"),
    Phrase("problem.bool_parsing", "Input should be a valid boolean, unable to interpret input"),
    Phrase("problem.dict_type", "Input should be a valid dictionary"),
    Phrase("problem.model_type", "Input should be an object"),
    Phrase("problem.list_type", "Input should be a valid list"),
    Phrase("problem.greater_than", "Input should be greater than {gt}"),
    Phrase("problem.greater_than_equal", "Input should be greater than or equal to {ge}"),
    Phrase("problem.less_than", "Input should be less than {lt}"),
    Phrase("problem.less_than_equal", "Input should be less than or equal to {le}"),
    Phrase("problem.string_too_short", "String should have at least {min_length} characters"),
    Phrase("problem.string_too_long", "String should have at most {max_length} characters"),
    Phrase("problem.too_short", "List should have at least {min_length} items, not {actual_length}"),
    Phrase("problem.too_long", "List should have at most {max_length} items, not {actual_length}"),
    Phrase("problem.literal_error", "Input should be {expected}"),
    Phrase("problem.enum", "Input should be {expected}"),
    Phrase("problem.string_pattern_mismatch", "String should match pattern '{pattern}'"),
    Phrase("problem.json_invalid", "Invalid JSON: {error}"),
)}


def field_problem(err: Mapping[str, Any]) -> str:
    """One pydantic error (an item of ``ValidationError.errors()``) as a phrase when its kind
    has one (pydantic's text kept as the English), else its message as written."""
    kind = str(err.get("type", ""))
    message = str(err.get("msg", "invalid")).removeprefix("Value error, ")
    if kind == "extra_forbidden":
        return UNKNOWN_FIELD()
    ctx = err.get("ctx") or {}
    if kind == "value_error":  # a validator's own words: its phrase, when it raised one
        raised = ctx.get("error")
        said = raised.args[0] if isinstance(raised, ValueError) and raised.args else None
        return said if isinstance(said, Said) else message
    phrase = _BY_TYPE.get(kind)
    if phrase is None or not phrase.names <= ctx.keys():
        return message
    args = {name: _plain(ctx[name]) for name in phrase.names}
    return Said(message, phrase.code, args)


def _plain(value: Any) -> str | int | float | bool | None:
    return value if value is None or isinstance(value, (str, int, float, bool)) else str(value)
