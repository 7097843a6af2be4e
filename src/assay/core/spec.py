"""The grader spec ``{type, name, config, weight}``: one shape for eval files, API bodies
and database rows. ``compile_spec`` validates it once, when it arrives."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from assay.core import registry
from assay.core.errors import SpecError
from assay.core.grader import Grader, GraderConfig
from assay.core.interfaces import Resources


class GraderSpec(BaseModel):
    """A grader as written by a user."""

    model_config = ConfigDict(extra="forbid")

    type: str = Field(description="Registry key, e.g. exact_match, regex, code.")
    name: str | None = Field(default=None, description="Defaults to the type.")
    config: dict[str, Any] = Field(default_factory=dict)
    weight: float = Field(default=1.0, ge=0.0, description="Weight in the sample's mean score.")


class CompiledSpec:
    """A validated spec: the grader class and its parsed config, ready to build graders."""

    __slots__ = ("grader_cls", "config", "name", "weight", "raw")

    def __init__(self, grader_cls: type[Grader], config: GraderConfig, name: str, weight: float,
                 raw: GraderSpec) -> None:
        self.grader_cls = grader_cls
        self.config = config
        self.name = name
        self.weight = weight
        self.raw = raw

    @property
    def type(self) -> str:
        return self.grader_cls.type

    def build(self, resources: Resources | None = None) -> Grader:
        return self.grader_cls(self.config, name=self.name, weight=self.weight, resources=resources)


def compile_spec(raw: Mapping[str, Any] | GraderSpec, *, path: str = "") -> CompiledSpec:
    """Validate a spec and its config. Raises SpecError naming the field path."""
    if isinstance(raw, GraderSpec):
        spec = raw
    else:
        if not isinstance(raw, Mapping):
            raise SpecError(f"a grader spec must be a mapping, got {type(raw).__name__}", path=path)
        try:
            spec = GraderSpec.model_validate(raw)
        except ValidationError as exc:
            raise SpecError.from_validation(exc, path=path) from None
    cls = registry.get(spec.type)
    if cls is None:
        known = list(registry.all_graders())
        hint = difflib.get_close_matches(spec.type, known, n=1)
        suggestion = f" (did you mean {hint[0]!r}?)" if hint else f"; known types: {', '.join(known)}"
        raise SpecError(f"unknown grader type {spec.type!r}{suggestion}", path=_join(path, "type"))
    config = cls.parse_config(spec.config, path=_join(path, "config"))
    return CompiledSpec(cls, config, spec.name or spec.type, spec.weight, spec)


def _join(path: str, field: str) -> str:
    return f"{path}.{field}" if path else field
