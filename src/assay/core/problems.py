"""Validation problems as phrases (``core.messages``): what pydantic found wrong with a field,
said so that the pages can say it in their language.

Pydantic writes its messages in English; every kind it can raise (a field missing, a number out
of range, a text too long, a wrong type, ...) gets a phrase here with pydantic's own text as the
English and its context as the values. A validator's ``ValueError`` keeps the phrase it was
raised with (``raise ValueError(SOME_PHRASE(...))``). Any other problem stays as pydantic
wrote it, inside a phrase of its own (``OTHER``) that the pages put in their language.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from assay.core.messages import Phrase, Said

AT = Phrase("problem.at", "{path}: {problem}")
"""A problem at a field path: ``config.timeout: Input should be ...``."""
UNKNOWN_FIELD = Phrase("problem.extra_forbidden", "unknown field (not allowed here)")
NUL_CHARACTER = Phrase("problem.nul", "may not contain the NUL character (\\u0000)")
"""Text a person reads or rows are found by (names, ids, query parameters): a NUL is never meant
there, and PostgreSQL cannot store or compare it."""

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
    # The other kinds pydantic v2 can raise (pydantic_core's list_all_errors()), tests/core checks the list
    Phrase("problem.no_such_attribute", "Object has no attribute '{attribute}'"),
    Phrase("problem.json_type", "JSON input should be string, bytes or bytearray"),
    Phrase("problem.recursion_loop", "Recursion error - cyclic reference detected"),
    Phrase("problem.recursion_depth_exceeded", "Recursion error - maximum validation depth exceeded"),
    Phrase("problem.frozen_field", "Field is frozen"),
    Phrase("problem.frozen_instance", "Instance is frozen"),
    Phrase("problem.invalid_key", "Keys should be strings"),
    Phrase("problem.get_attribute_error", "Error extracting attribute: {error}"),
    Phrase("problem.model_attributes_type", "Input should be a valid dictionary or object to extract fields from"),
    Phrase("problem.dataclass_type", "Input should be a dictionary or an instance of {class_name}"),
    Phrase("problem.dataclass_exact_type", "Input should be an instance of {class_name}"),
    Phrase("problem.named_tuple_type", "Input should be a tuple, list, dictionary or an instance of {class_name}"),
    Phrase("problem.none_required", "Input should be None"),
    Phrase("problem.multiple_of", "Input should be a multiple of {multiple_of}"),
    Phrase("problem.finite_number", "Input should be a finite number"),
    Phrase("problem.iterable_type", "Input should be iterable"),
    Phrase("problem.iteration_error", "Error iterating over object, error: {error}"),
    Phrase("problem.string_unicode", "Input should be a valid string, unable to parse raw data as a unicode string"),
    Phrase("problem.string_not_ascii", "String should contain only ASCII characters"),
    Phrase("problem.frozen_dict_type", "Input should be a valid frozendict"),
    Phrase("problem.ordered_dict_type", "Input should be a valid OrderedDict"),
    Phrase("problem.counter_type", "Input should be a valid Counter"),
    Phrase("problem.mapping_type", "Input should be a valid mapping, error: {error}"),
    Phrase("problem.deque_type", "Input should be a valid deque"),
    Phrase("problem.tuple_type", "Input should be a valid tuple"),
    Phrase("problem.set_type", "Input should be a valid set"),
    Phrase("problem.set_item_not_hashable", "Set items should be hashable"),
    Phrase("problem.int_parsing_size", "Unable to parse input string as an integer, exceeded maximum size"),
    Phrase("problem.bytes_type", "Input should be a valid bytes"),
    Phrase("problem.bytes_too_short", "Data should have at least {min_length} bytes"),
    Phrase("problem.bytes_too_long", "Data should have at most {max_length} bytes"),
    Phrase("problem.bytes_invalid_encoding", "Data should be valid {encoding}: {encoding_error}"),
    Phrase("problem.assertion_error", "Assertion failed, {error}"),
    Phrase("problem.date_type", "Input should be a valid date"),
    Phrase("problem.date_parsing", "Input should be a valid date in the format YYYY-MM-DD, {error}"),
    Phrase("problem.date_from_datetime_parsing", "Input should be a valid date or datetime, {error}"),
    Phrase("problem.date_from_datetime_inexact", "Datetimes provided to dates should have zero time - e.g. be "
                     "exact dates"),
    Phrase("problem.date_past", "Date should be in the past"),
    Phrase("problem.date_future", "Date should be in the future"),
    Phrase("problem.time_type", "Input should be a valid time"),
    Phrase("problem.time_parsing", "Input should be in a valid time format, {error}"),
    Phrase("problem.datetime_type", "Input should be a valid datetime"),
    Phrase("problem.datetime_parsing", "Input should be a valid datetime, {error}"),
    Phrase("problem.datetime_object_invalid", "Invalid datetime object, got {error}"),
    Phrase("problem.datetime_from_date_parsing", "Input should be a valid datetime or date, {error}"),
    Phrase("problem.datetime_past", "Input should be in the past"),
    Phrase("problem.datetime_future", "Input should be in the future"),
    Phrase("problem.timezone_naive", "Input should not have timezone info"),
    Phrase("problem.timezone_aware", "Input should have timezone info"),
    Phrase("problem.timezone_offset", "Timezone offset of {tz_expected} required, got {tz_actual}"),
    Phrase("problem.time_delta_type", "Input should be a valid timedelta"),
    Phrase("problem.time_delta_parsing", "Input should be a valid timedelta, {error}"),
    Phrase("problem.frozen_set_type", "Input should be a valid frozenset"),
    Phrase("problem.is_instance_of", "Input should be an instance of {class}"),
    Phrase("problem.is_subclass_of", "Input should be a subclass of {class}"),
    Phrase("problem.callable_type", "Input should be callable"),
    Phrase("problem.union_tag_invalid", "Input tag '{tag}' found using {discriminator} does not "
                     "match any of the expected tags: {expected_tags}"),
    Phrase("problem.union_tag_not_found", "Unable to extract tag using discriminator {discriminator}"),
    Phrase("problem.arguments_type", "Arguments must be a tuple, list or a dictionary"),
    Phrase("problem.missing_argument", "Missing required argument"),
    Phrase("problem.unexpected_keyword_argument", "Unexpected keyword argument"),
    Phrase("problem.missing_keyword_only_argument", "Missing required keyword only argument"),
    Phrase("problem.unexpected_positional_argument", "Unexpected positional argument"),
    Phrase("problem.missing_positional_only_argument", "Missing required positional only argument"),
    Phrase("problem.multiple_argument_values", "Got multiple values for argument"),
    Phrase("problem.url_type", "URL input should be a string or URL"),
    Phrase("problem.url_parsing", "Input should be a valid URL, {error}"),
    Phrase("problem.url_syntax_violation", "Input violated strict URL syntax rules, {error}"),
    Phrase("problem.url_too_long", "URL should have at most {max_length} characters"),
    Phrase("problem.url_scheme", "URL scheme should be {expected_schemes}"),
    Phrase("problem.uuid_type", "UUID input should be a string, bytes or UUID object"),
    Phrase("problem.uuid_parsing", "Input should be a valid UUID, {error}"),
    Phrase("problem.uuid_version", "UUID version {expected_version} expected"),
    Phrase("problem.decimal_type", "Decimal input should be an integer, float, string or Decimal object"),
    Phrase("problem.decimal_parsing", "Input should be a valid decimal"),
    Phrase("problem.decimal_max_digits", "Decimal input should have no more than {max_digits} digits in total"),
    Phrase("problem.decimal_max_places", "Decimal input should have no more than {decimal_places} decimal places"),
    Phrase("problem.decimal_whole_digits", "Decimal input should have no more than {whole_digits} "
                     "digits before the decimal point"),
    Phrase("problem.missing_sentinel_error", "Input should be the 'MISSING' sentinel"),
    Phrase("problem.ellipsis_error", "Input should be the 'Ellipsis' literal"),
    Phrase("problem.needs_python_object", "Cannot check `{method_name}` when validating from json, use "
                     "a JsonOrPython validator instead"),
    Phrase("problem.default_factory_not_called", "The default factory uses validated data, but at least one "
                     "validation error occurred"),
    Phrase("problem.fraction_type", "Fraction input should be an integer, float, string or Fraction object"),
    Phrase("problem.fraction_parsing", "Input is not a valid fraction"),
    Phrase("problem.complex_type", "Input should be a valid python complex object, a number, or "
                     "a valid complex string"),
    Phrase("problem.complex_str_parsing", "Input should be a valid complex string"),
)}
OTHER = Phrase("problem.other", "{message}")
"""A problem without a phrase of its own (a validator's plain ``ValueError``, a kind pydantic
adds later): its text as written, which the pages put in a sentence of their language."""


def field_problem(err: Mapping[str, Any]) -> str:
    """One pydantic error (an item of ``ValidationError.errors()``) as a phrase when its kind
    has one (pydantic's text kept as the English), else its message as written."""
    kind = str(err.get("type", ""))
    message = str(err.get("msg", "invalid")).removeprefix("Value error, ")
    if kind == "extra_forbidden":
        return UNKNOWN_FIELD()
    ctx = err.get("ctx") or {}
    if kind == "value_error":  # a validator's own words: its phrase, when it raised one
        raised = ctx.get("error")  # a ValueError; or a custom error's "reason" (a model validator's)
        said = raised.args[0] if isinstance(raised, ValueError) and raised.args else ctx.get("reason")
        return said if isinstance(said, Said) else OTHER.told(message, {"message": message})
    phrase = _BY_TYPE.get(kind)
    if phrase is None or not phrase.names <= ctx.keys():
        return OTHER.told(message, {"message": message})
    args = {name: _plain(ctx[name]) for name in phrase.names}
    return Said(message, phrase.code, args)


def _plain(value: Any) -> str | int | float | bool | None:
    return value if value is None or isinstance(value, (str, int, float, bool)) else str(value)
