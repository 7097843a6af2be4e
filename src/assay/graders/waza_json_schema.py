"""``waza_json_schema``: waza's ``json_schema`` grader with ``extract_json`` (microsoft/waza
``internal/graders/json_schema_grader.go`` and its tests at 9c5d7d97 / 7210f058;
``schemas/eval.schema.json`` at 022454e3).

Without ``extract_json`` the whole output must be JSON, as assay's ``json_schema`` grades it
(the waza dialect maps such graders there). With it, the output is scanned left to right: at
each ``{`` or ``[`` one JSON value is decoded if one starts there, and the scan resumes after
it; elsewhere it moves one character on. Exactly one object or array must be found (a bare
string or number is not one, and neither is a value nested inside one already found); it is
then validated against the schema. Zero or several is a failed grade saying which.

The scan costs at most ``SCAN_BUDGET`` characters of decoding per output (a failed attempt
costs up to where it failed), so untrusted output of many unclosed brackets cannot take
quadratic time: past the budget the grade is an ``invalid_output`` error.
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import Field, PrivateAttr, model_validator

from assay.core.grader import Grader, GraderConfig, Taxonomy, Traits
from assay.core.registry import register
from assay.core.result import ErrorCode, GraderResult
from assay.core.sample import Sample
from assay.core.untrusted import TooDeep
from assay.graders._text import as_text
from assay.graders.json_schema import compile_schema, violations

SCAN_BUDGET = 20_000_000
"""Characters of decoding one output's scan may spend (about a second)."""


class WazaJsonSchemaConfig(GraderConfig):
    schema_: dict[str, Any] | bool = Field(alias="schema", description="The JSON Schema the value must satisfy.")
    extract_json: bool = Field(default=False, description="Find exactly one JSON object or array in prose or a "
                                                          "Markdown code block, and validate that.")

    _validator: Any = PrivateAttr(default=None)

    @model_validator(mode="after")
    def _compile(self) -> WazaJsonSchemaConfig:
        self._validator = compile_schema(self.schema_)  # ValueError names what is wrong with the schema
        return self


class _Budget(Exception):
    pass


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")  # Go's decoder refuses NaN and Infinity, so must this


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def embedded_values(text: str, budget: int = SCAN_BUDGET) -> list[Any]:
    """The JSON objects and arrays found scanning ``text`` as waza's ``embeddedJSONValues``
    does; raises ``_Budget`` past ``budget`` characters of decoding."""
    values: list[Any] = []
    offset, spent, n = 0, 0, len(text)
    while offset < n:
        brace, bracket = text.find("{", offset), text.find("[", offset)
        starts = [i for i in (brace, bracket) if i >= 0]
        if not starts:
            break
        offset = min(starts)
        try:
            value, end = _DECODER.raw_decode(text, offset)
        except json.JSONDecodeError as exc:
            spent += max(1, exc.pos - offset)
            offset += 1
        except (ValueError, RecursionError):
            spent += n - offset
            offset += 1
        else:
            spent += end - offset
            values.append(value)
            offset = end
        if spent > budget:
            raise _Budget
    return values


@register
class WazaJsonSchema(Grader[WazaJsonSchemaConfig]):
    type = "waza_json_schema"
    description = "waza's json_schema grader with extract_json: one JSON object or array found in the output."
    traits = Traits()
    taxonomy = Taxonomy(reference="reference-free")

    def grade(self, sample: Sample) -> GraderResult:
        try:
            text = as_text(sample.output)
        except TooDeep as exc:
            return self.error_result(ErrorCode.INVALID_OUTPUT, f"output is {exc}")
        if not self.config.extract_json:
            try:
                value = json.loads(text, parse_constant=_reject_constant)
            except ValueError as exc:
                return self.scored_result(False, 0.0, f"Output is not valid JSON: {exc}")
        else:
            try:
                found = embedded_values(text)
            except _Budget:
                return self.error_result(ErrorCode.INVALID_OUTPUT, "output has too many unclosed brackets to "
                                         f"extract JSON from within {SCAN_BUDGET:,} characters of decoding")
            if len(found) != 1:
                how = "zero" if not found else "multiple"
                return self.scored_result(False, 0.0, "Output must contain exactly one JSON object or array: "
                                                      f"found {how} JSON object or array documents")
            value = found[0]
        validator = self.config._validator
        if validator.is_valid(value):
            return self.scored_result(True, 1.0, "Output matches JSON schema")
        reason, details = violations(validator, value)
        return self.scored_result(False, 0.0, f"Schema validation failed: {reason}", details)
