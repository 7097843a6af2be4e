"""A JSON Schema violation (jsonschema-rs) as a phrase, so the pages say it in their language.

jsonschema-rs words its violations in English. Each kind of violation (``err.kind``: Required,
Type, Minimum, ...) is a phrase here whose values are the schema's own data (the property, the
limit, the types, as compact JSON) and the offending value; the text stays the validator's own
message (``Phrase.told``), so a results file and the CLI read exactly as before. A kind not
listed here (a format the validator could not run, a regex it gave up on) stays as written.

Only a failing sample's violations are worded: nothing here runs for a passing one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import orjson

from assay.core.messages import Phrase
from assay.graders._text import preview

MAX_VALUE = 200
"""Characters of the offending value (or of a schema's data) kept in a phrase's values."""


def _json(value: Any) -> str:
    """Compact JSON with sorted keys, as jsonschema-rs renders values, cut to ``MAX_VALUE``."""
    if type(value) is int:  # the common case (a limit), without the encoder
        text = str(value)
    else:
        try:
            text = orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
        except TypeError:
            text = repr(value)
    return text if len(text) <= MAX_VALUE else preview(text, MAX_VALUE)


REQUIRED = Phrase("json_schema.v.required", "{property} is a required property")
TYPE = Phrase("json_schema.v.type", "{value} is not of type {type}")
TYPES = Phrase("json_schema.v.types", "{value} is not of types {types}")
_SIMPLE: dict[str, tuple[Phrase, str]] = {  # kind -> (phrase, the kind's field that fills {limit} & co)
    "Minimum": (Phrase("json_schema.v.minimum", "{value} is less than the minimum of {limit}"), "limit"),
    "Maximum": (Phrase("json_schema.v.maximum", "{value} is greater than the maximum of {limit}"), "limit"),
    "ExclusiveMinimum": (Phrase("json_schema.v.exclusive_minimum",
                                "{value} is less than or equal to the minimum of {limit}"), "limit"),
    "ExclusiveMaximum": (Phrase("json_schema.v.exclusive_maximum",
                                "{value} is greater than or equal to the maximum of {limit}"), "limit"),
    "MultipleOf": (Phrase("json_schema.v.multiple_of", "{value} is not a multiple of {multiple_of}"), "multiple_of"),
    "Enum": (Phrase("json_schema.v.enum", "{value} is not one of {options}"), "options"),
    "Pattern": (Phrase("json_schema.v.pattern", "{value} does not match {pattern}"), "pattern"),
    "Format": (Phrase("json_schema.v.format", "{value} is not a {format}"), "format"),
    "Not": (Phrase("json_schema.v.not", "{schema} is not allowed for {value}"), "schema"),
}
_COUNTED: dict[str, tuple[Phrase, Phrase]] = {  # kind -> (phrase, its form for a limit of 1); {limit}
    "MinLength": (Phrase("json_schema.v.min_length", "{value} is shorter than {limit} characters"),
                  Phrase("json_schema.v.min_length_one", "{value} is shorter than {limit} character")),
    "MaxLength": (Phrase("json_schema.v.max_length", "{value} is longer than {limit} characters"),
                  Phrase("json_schema.v.max_length_one", "{value} is longer than {limit} character")),
    "MinItems": (Phrase("json_schema.v.min_items", "{value} has less than {limit} items"),
                 Phrase("json_schema.v.min_items_one", "{value} has less than {limit} item")),
    "MaxItems": (Phrase("json_schema.v.max_items", "{value} has more than {limit} items"),
                 Phrase("json_schema.v.max_items_one", "{value} has more than {limit} item")),
    "MinProperties": (Phrase("json_schema.v.min_properties", "{value} has less than {limit} properties"),
                      Phrase("json_schema.v.min_properties_one", "{value} has less than {limit} property")),
    "MaxProperties": (Phrase("json_schema.v.max_properties", "{value} has more than {limit} properties"),
                      Phrase("json_schema.v.max_properties_one", "{value} has more than {limit} property")),
}
_VALUE_ONLY: dict[str, Phrase] = {  # kinds whose message says only the offending value
    "UniqueItems": Phrase("json_schema.v.unique_items", "{value} has non-unique elements"),
    "AnyOf": Phrase("json_schema.v.any_of", "{value} is not valid under any of the schemas listed in the 'anyOf' "
                                            "keyword"),
    "OneOfNotValid": Phrase("json_schema.v.one_of_none", "{value} is not valid under any of the schemas listed in "
                                                         "the 'oneOf' keyword"),
    "OneOfMultipleValid": Phrase("json_schema.v.one_of_many", "{value} is valid under more than one of the schemas "
                                                              "listed in the 'oneOf' keyword"),
    "Contains": Phrase("json_schema.v.contains", "None of {value} are valid under the given schema"),
    "FalseSchema": Phrase("json_schema.v.false_schema", "False schema does not allow {value}"),
}
_UNEXPECTED: dict[str, Phrase] = {  # kinds that name the unexpected properties or items
    "AdditionalProperties": Phrase("json_schema.v.additional_properties",
                                   "Additional properties are not allowed ({unexpected} unexpected)"),
    "UnevaluatedProperties": Phrase("json_schema.v.unevaluated_properties",
                                    "Unevaluated properties are not allowed ({unexpected} unexpected)"),
    "UnevaluatedItems": Phrase("json_schema.v.unevaluated_items",
                               "Unevaluated items are not allowed ({unexpected} unexpected)"),
}
CONSTANT = Phrase("json_schema.v.constant", "{expected} was expected")


def said(err: Any, message: str) -> str:
    """``message`` (the violation's text as reasons show it) as the phrase of ``err``'s kind,
    or as written when its kind is not one listed here."""
    kind = err.kind
    name = type(kind).__name__
    maker = _MAKERS.get(name)
    if maker is None:
        if name == "PropertyNames":  # its message is the inner violation's, about the property's name
            inner = kind.as_dict().get("error")
            return said(inner, message) if inner is not None else message
        return message
    try:
        phrase, args = maker(kind.as_dict(), err.instance)
    except (KeyError, TypeError, ValueError):  # a kind whose fields changed in another jsonschema-rs
        return message
    return phrase.told(message, args)


Maker = Callable[[dict[str, Any], Any], tuple[Phrase, dict[str, Any]]]


def _required(fields: dict[str, Any], _instance: Any) -> tuple[Phrase, dict[str, Any]]:
    return REQUIRED, {"property": _json(fields["property"])}


def _type(fields: dict[str, Any], instance: Any) -> tuple[Phrase, dict[str, Any]]:
    types = fields["types"]
    if len(types) == 1:
        return TYPE, {"value": _json(instance), "type": _json(types[0])}
    return TYPES, {"value": _json(instance), "types": ", ".join(_json(t) for t in types)}


def _simple(phrase: Phrase, field: str) -> Maker:
    return lambda fields, instance: (phrase, {"value": _json(instance), field: _json(fields[field])})


def _counted_kind(many: Phrase, one: Phrase) -> Maker:
    def make(fields: dict[str, Any], instance: Any) -> tuple[Phrase, dict[str, Any]]:
        limit = fields["limit"]
        return (one if limit == 1 else many), {"value": _json(instance), "limit": _json(limit)}
    return make


def _value_only(phrase: Phrase) -> Maker:
    return lambda _fields, instance: (phrase, {"value": _json(instance)})


def _unexpected(phrase: Phrase) -> Maker:
    return lambda fields, _instance: (phrase, {"unexpected": _json(fields["unexpected"])})


def _constant(fields: dict[str, Any], _instance: Any) -> tuple[Phrase, dict[str, Any]]:
    return CONSTANT, {"expected": _json(fields["expected_value"])}


_MAKERS: dict[str, Maker] = {
    "Required": _required, "Type": _type, "Constant": _constant,
    **{kind: _simple(phrase, field) for kind, (phrase, field) in _SIMPLE.items()},
    **{kind: _counted_kind(many, one) for kind, (many, one) in _COUNTED.items()},
    **{kind: _value_only(phrase) for kind, phrase in _VALUE_ONLY.items()},
    **{kind: _unexpected(phrase) for kind, phrase in _UNEXPECTED.items()},
}
