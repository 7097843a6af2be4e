"""``json_schema``: the output parses as JSON and validates against a schema
(Draft 2020-12 unless ``$schema`` names another draft).

A schema is self-contained: its references resolve inside it (``#/...``, ``$defs``,
``$anchor``, ``$id``s of subschemas it embeds) or to the bundled drafts' metaschemas. Nothing
is fetched: a reference to a URL or a file is an ``invalid_config`` error when the spec is
validated, before any I/O. The schema is compiled once, then, and kept with the config
(``JsonSchemaConfig.validator``).

Output that is not JSON is a ``failed`` grade, as the product spec says: checking that the
output is JSON is this grader's job. A Python value JSON cannot hold (from the library) is an
``invalid_output`` error.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, NoReturn

import jsonschema_rs
import orjson
from pydantic import Field, PrivateAttr, ValidationError, model_validator
from pydantic_core import InitErrorDetails, PydanticCustomError

from assay.core.grader import BatchGrader, GraderConfig, Traits
from assay.core.messages import Phrase, Said, in_turn
from assay.core.registry import register
from assay.core.result import ErrorCode, GraderResult
from assay.core.sample import Sample
from assay.graders._schema_words import said
from assay.graders._text import preview

MAX_REPORTED_ERRORS = 5
MAX_INSTANCE = 200
"""Characters of the offending value shown in a violation's message."""
MAX_MESSAGE = 400
"""Characters of one violation's message (and of its path) kept."""
NOT_JSON = Phrase("json_schema.not_json", "output is not valid JSON: {problem}")
NOT_FINITE = Phrase("json_schema.not_finite", "output is not valid JSON: {path} holds a number JSON cannot hold "
                                              "(NaN or an infinity)")
NOT_A_VALUE = Phrase("json_schema.not_a_value", "output is not a JSON value: {problem}")
VIOLATION = Phrase("json_schema.violation", "schema violation: {violations}")
_VIOLATION_HEAD = VIOLATION.text.removesuffix("{violations}")
AT = Phrase("json_schema.at", "{path}: {violation}")
"""One violation after its path: the validator's own message (jsonschema-rs, in English) as the
phrase of its kind (``_schema_words``), or as written for a kind without one."""
INVALID_AT = Phrase("json_schema.invalid_at", "invalid JSON Schema at {where}: {problem}")
INVALID_AT_ROOT = Phrase("json_schema.invalid_at_root", "invalid JSON Schema at its root: {problem}")
INVALID = Phrase("json_schema.invalid", "invalid JSON Schema: {problem}")
NOT_BUNDLED = Phrase("json_schema.not_bundled", "$schema {uri} is not a bundled draft; use one of {drafts}")
OUTSIDE = Phrase("json_schema.outside", "reference {uri} is outside the schema; only local references (#/…) are "
                                        "allowed")
_BUNDLED_DRAFTS = ("http://json-schema.org/draft-04/schema#, http://json-schema.org/draft-06/schema#, "
                   "http://json-schema.org/draft-07/schema#, https://json-schema.org/draft/2019-09/schema, "
                   "https://json-schema.org/draft/2020-12/schema")


class JsonSchemaConfig(GraderConfig):
    schema_: dict[str, Any] | bool = Field(
        alias="schema",
        description="The JSON Schema the output must satisfy. Its references must stay inside it "
                    "(#/..., $defs, $anchor, embedded $id); $schema may name a bundled draft "
                    "(04, 06, 07, 2019-09, 2020-12). Nothing is fetched from the network or files.")

    _validator: Any = PrivateAttr(default=None)

    @property
    def validator(self) -> jsonschema_rs.Validator:
        """Prepared state: the schema compiled once, when the config is validated."""
        return self._validator

    @model_validator(mode="after")
    def _compile(self) -> JsonSchemaConfig:
        try:
            self._validator = compile_schema(self.schema_)
        except ValueError as exc:  # its phrase kept (core.problems reads it from the error's context)
            _fail("schema", exc.args[0] if exc.args and isinstance(exc.args[0], Said) else str(exc), self.schema_)
        return self


def _fail(field: str, message: str, value: Any) -> NoReturn:
    """Raise a validation error placed at ``field`` (a model validator's own errors have no field)."""
    error = PydanticCustomError("value_error", "{reason}", {"reason": message})
    raise ValidationError.from_exception_data(
        JsonSchemaConfig.__name__, [InitErrorDetails(type=error, loc=(field,), input=value)])


def compile_schema(schema: dict[str, Any] | bool) -> jsonschema_rs.Validator:
    """A validator for ``schema``; raises ValueError saying what is wrong with it.

    jsonschema-rs asks its ``retriever`` for every resource it does not hold (it holds the
    schema's own resources and the bundled drafts); ours refuses them all, without I/O.
    """
    refused: list[str] = []

    def refuse(uri: str) -> NoReturn:
        refused.append(uri)
        raise ValueError("assay does not fetch schema references")

    try:
        validator = jsonschema_rs.validator_for(schema, retriever=refuse)
    except jsonschema_rs.ValidationError as exc:
        if refused:
            raise ValueError(_outside(refused[0], schema)) from None
        where, problem = _pointer(exc.instance_path).lstrip("."), _short(exc.message)
        problem = said(exc, problem)  # the metaschema's violation, by its kind
        raise ValueError(INVALID_AT(where=preview(where, MAX_MESSAGE), problem=problem) if where
                         else INVALID_AT_ROOT(problem=problem)) from None
    except (ValueError, TypeError, OverflowError) as exc:
        if refused:
            raise ValueError(_outside(refused[0], schema)) from None
        raise ValueError(INVALID(problem=_short(str(exc)))) from None
    if refused:  # some refusals are recovered from (an unknown $schema falls back to a default)
        raise ValueError(_outside(refused[0], schema))
    return validator


def _outside(uri: str, schema: dict[str, Any] | bool) -> Said:
    uri = uri.removeprefix("json-schema:///")  # how jsonschema-rs spells a reference with no base
    declared = schema.get("$schema") if isinstance(schema, dict) else None
    if isinstance(declared, str) and declared.rstrip("#") == uri.rstrip("#"):
        return NOT_BUNDLED(uri=repr(preview(declared, 200)), drafts=_BUNDLED_DRAFTS)
    return OUTSIDE(uri=repr(preview(uri, 200)))


def _pointer(path: Sequence[str | int]) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)


def _short(message: str) -> str:
    """At most ``MAX_MESSAGE`` characters, keeping the end, where the broken rule is named."""
    if len(message) <= MAX_MESSAGE:
        return message
    tail = MAX_MESSAGE // 3
    return f"{message[:MAX_MESSAGE - tail - 1]}…{message[-tail:]}"


def _message(err: Any) -> str:
    """A violation's message with the offending value cut to ``MAX_INSTANCE`` characters.

    jsonschema-rs starts most messages with the value as compact JSON with sorted keys, which
    is orjson's rendering too; where they differ, the whole message is shortened instead."""
    message = err.message
    if len(message) <= MAX_INSTANCE:
        return message
    try:
        shown = orjson.dumps(err.instance, option=orjson.OPT_SORT_KEYS).decode()
    except TypeError:
        shown = ""
    if len(shown) > MAX_INSTANCE and message.startswith(shown):
        message = preview(shown, MAX_INSTANCE) + message[len(shown):]
    return _short(message)


@register
class JsonSchema(BatchGrader[JsonSchemaConfig]):
    type = "json_schema"
    description = "Output is JSON that validates against a JSON Schema (Draft 2020-12 by default)."
    traits = Traits(api_safe=True, inline=True, form=True, kernel="assay.runner.columnar.json_schema:grade")

    def grade_batch(self, samples: Sequence[Sample]) -> list[GraderResult]:
        validator = self.config.validator
        is_valid = validator.is_valid
        loads = orjson.loads
        scored = self.scored_result
        out = []
        for s in samples:
            raw = s.output
            if raw.__class__ is str:
                try:
                    doc = loads(raw)
                except orjson.JSONDecodeError as exc:
                    out.append(scored(False, 0.0, NOT_JSON(problem=str(exc))))
                    continue
            else:
                doc = raw
                where = _non_finite(doc)
                if where is not None:  # jsonschema-rs would see null there, and say so
                    out.append(scored(False, 0.0, NOT_FINITE(path=where)))
                    continue
            try:
                out.append(scored(True, 1.0) if is_valid(doc) else self._violations(validator, doc))
            except (ValueError, TypeError, OverflowError) as exc:  # a Python value JSON cannot hold
                out.append(self.error_result(ErrorCode.INVALID_OUTPUT, NOT_A_VALUE(problem=_short(str(exc)))))
        return out

    def _violations(self, validator: jsonschema_rs.Validator, doc: Any) -> GraderResult:
        reason, details = violations(validator, doc)
        return self.scored_result(False, 0.0, reason, details)


def _non_finite(doc: Any) -> str | None:
    """The JSON pointer (``$/a/0``) of the first NaN or infinity in a Python value, or None."""
    stack: list[tuple[Any, str]] = [(doc, "$")]
    while stack:
        value, path = stack.pop()
        if value.__class__ is float and not math.isfinite(value):
            return path
        if isinstance(value, dict):
            stack.extend((v, f"{path}/{k}") for k, v in reversed(list(value.items())))
        elif isinstance(value, (list, tuple)):
            stack.extend((v, f"{path}/{i}") for i, v in reversed(list(enumerate(value))))
    return None


def violations(validator: jsonschema_rs.Validator, doc: Any) -> tuple[Said, dict[str, Any]]:
    """Why ``doc`` fails: the reason and the details of a failed result (the first
    ``MAX_REPORTED_ERRORS`` violations, each with its path, message and schema path)."""
    errors: list[dict[str, Any]] = []
    items: list[Said] = []
    for err in validator.iter_errors(doc):
        path, message = preview("$" + _pointer(err.instance_path), MAX_MESSAGE), _message(err)
        errors.append({"path": path, "message": message,
                       "schema_path": preview("/".join(str(p) for p in err.schema_path), MAX_MESSAGE)})
        violation = said(err, message)  # told, not formatted: a failing sample's cost is per violation
        items.append(AT.told(f"{path}: {message}", {"path": path, "violation": {
            "code": violation.code, "args": violation.args} if isinstance(violation, Said) else violation}))
        if len(errors) >= MAX_REPORTED_ERRORS:
            break
    listed = in_turn(items)
    reason = VIOLATION.told(_VIOLATION_HEAD + listed, {"violations": {"code": listed.code, "args": listed.args}})
    return reason, {"errors": errors}
