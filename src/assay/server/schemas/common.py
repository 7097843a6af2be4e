"""What every API body shares: camelCase field names, the ``{code, data}`` envelope and the
``{code, message}`` error."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Generic, TypeVar, overload

from pydantic import AfterValidator, BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel
from starlette.responses import Response

from assay.core.problems import NUL_CHARACTER

T = TypeVar("T")


class ApiModel(BaseModel):
    """Base of request and response bodies: camelCase in JSON, snake_case in Python; unknown
    request fields are refused (a typo is an error, not silently ignored)."""

    model_config = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="forbid",
                              serialize_by_alias=True)


def _no_nul(value: str) -> str:
    if "\x00" in value:
        raise ValueError(NUL_CHARACTER())
    return value


NoNul = AfterValidator(_no_nul)
"""For names, descriptions and ids (``Annotated[str, Field(max_length=200), NoNul]``): text a
person reads or rows are found by, where a NUL is never meant (PostgreSQL cannot store it).
Graded data (inputs, outputs, rows) may hold NULs."""


class Envelope(BaseModel, Generic[T]):
    """A successful response: ``code`` is always 200, ``data`` the payload."""

    code: int = Field(default=200, description="200 on success.")
    data: T


class ErrorBody(BaseModel):
    """An error response: ``code`` is the specification's error code (503001 evaluator not found,
    503002 evaluator execution failed) or the HTTP status; ``message`` says what and where."""

    code: int
    message: str


def envelope_response(data: BaseModel) -> Response:
    """``{code: 200, data}`` serialised straight from the model (camelCase), skipping FastAPI's
    validation of a response it already holds as a model: the route's ``response_model`` still
    documents it."""
    return Response(b'{"code":200,"data":' + data.__pydantic_serializer__.to_json(data) + b"}",
                    media_type="application/json")


@overload
def iso(value: datetime) -> str: ...
@overload
def iso(value: None) -> None: ...
@overload
def iso(value: datetime | None) -> str | None: ...


def iso(value: datetime | None) -> str | None:
    """A timestamp as ISO 8601 in UTC (SQLite hands back naive datetimes, which are UTC)."""
    if value is None:
        return None
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z")


ERROR_RESPONSES: dict[int | str, dict[str, Any]] = {
    401: {"model": ErrorBody, "description": "No token, or a token that is unknown or revoked."},
    403: {"model": ErrorBody, "description": "Not allowed: a preset, or another user's row."},
    404: {"model": ErrorBody, "description": "Not found (503001 for an evaluator)."},
    413: {"model": ErrorBody, "description": "The body or the code is too large."},
    422: {"model": ErrorBody, "description": "Invalid input; the message names the field."},
}
