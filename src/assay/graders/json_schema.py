"""``json_schema``: the output parses as JSON and validates against a schema
(Draft 2020-12 unless ``$schema`` names another draft)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jsonschema_rs
import orjson
from pydantic import Field, PrivateAttr, field_validator

from assay.core.grader import BatchGrader, GraderConfig
from assay.core.registry import register
from assay.core.result import GraderResult
from assay.core.sample import Sample

MAX_REPORTED_ERRORS = 5


class JsonSchemaConfig(GraderConfig):
    schema_: dict[str, Any] | bool = Field(alias="schema", description="The JSON Schema the output must satisfy.")

    _validator: Any = PrivateAttr(default=None)

    @field_validator("schema_")
    @classmethod
    def _valid_schema(cls, value: dict[str, Any] | bool) -> dict[str, Any] | bool:
        _compile(value)
        return value

    def model_post_init(self, context: Any) -> None:
        self._validator = _compile(self.schema_)


def _compile(schema: dict[str, Any] | bool) -> Any:
    try:
        return jsonschema_rs.validator_for(schema)
    except jsonschema_rs.ValidationError as exc:
        where = _pointer(exc.instance_path)
        raise ValueError(f"invalid JSON Schema at {where.lstrip('.') or 'its root'}: {exc.message}") from None
    except (ValueError, TypeError) as exc:
        raise ValueError(f"invalid JSON Schema: {exc}") from None


def _pointer(path: Sequence[str | int]) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in path)


@register
class JsonSchema(BatchGrader):
    type = "json_schema"
    description = "Output is JSON that validates against a JSON Schema (Draft 2020-12 by default)."
    Config = JsonSchemaConfig

    def grade_batch(self, samples: Sequence[Sample]) -> list[GraderResult]:
        validator = self.config._validator
        is_valid = validator.is_valid
        loads = orjson.loads
        verdict = self.verdict
        out = []
        for s in samples:
            raw = s.output
            if raw.__class__ is str:
                try:
                    doc = loads(raw)
                except orjson.JSONDecodeError as exc:
                    out.append(verdict(False, 0.0, f"output is not valid JSON: {exc}"))
                    continue
            else:
                doc = raw
            if is_valid(doc):
                out.append(verdict(True, 1.0))
            else:
                out.append(self._violations(validator, doc))
        return out

    def _violations(self, validator: Any, doc: Any) -> GraderResult:
        errors = []
        for err in validator.iter_errors(doc):
            errors.append({"path": "$" + _pointer(err.instance_path), "message": err.message,
                           "schema_path": "/".join(str(p) for p in err.schema_path)})
            if len(errors) >= MAX_REPORTED_ERRORS:
                break
        reason = "; ".join(f"{e['path']}: {e['message']}" for e in errors)
        return self.verdict(False, 0.0, f"schema violation: {reason}", {"errors": errors})
