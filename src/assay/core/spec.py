"""The grader spec ``{type, name, config, weight}``: one shape for eval files, API bodies
and database rows. ``compile_spec`` validates it once, when it arrives."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from assay.core import registry
from assay.core.context import SpecContext
from assay.core.errors import SpecError
from assay.core.grader import Grader, GraderConfig, Taxonomy, Traits
from assay.core.interfaces import Resources
from assay.core.result import Kind

MAX_WEIGHT = 1e6
"""Largest grader weight: weighted sums of larger ones lose the smaller weights to rounding."""

Weight = Annotated[float, Field(strict=True, ge=0.0, le=MAX_WEIGHT, allow_inf_nan=False,
                                description=f"Weight in the sample's mean score, 0 to {MAX_WEIGHT:g}.")]
"""A grader weight: a finite number (not a boolean or text) in [0, MAX_WEIGHT]."""
Fraction = Annotated[float, Field(strict=True, ge=0.0, le=1.0, allow_inf_nan=False)]
"""A threshold or score: a number (not a boolean or text) in [0, 1]."""


class GraderSpec(BaseModel):
    """A grader as written by a user."""

    model_config = ConfigDict(extra="forbid")

    type: str = Field(description="Registry key, e.g. exact_match, regex, code.")
    name: str | None = Field(default=None, min_length=1, max_length=200, description="Defaults to the type.")
    config: dict[str, Any] = Field(default_factory=dict)
    weight: Weight = 1.0


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

    @property
    def taxonomy(self) -> Taxonomy:
        """This spec's taxonomy (a ``composite`` costs what its dearest child costs)."""
        return self.grader_cls.taxonomy_for(self.config)

    @property
    def traits(self) -> Traits:
        """This spec's traits (a ``composite``'s come from its children; a regex needing
        backtracking is neither inline nor a kernel)."""
        return self.grader_cls.traits_for(self.config)

    @property
    def kind(self) -> Kind:
        """This spec's result kind (a ``composite`` of judges is ``llm``)."""
        return self.grader_cls.kind_for(self.config)

    def dump(self) -> dict[str, Any]:
        """The validated spec ``{type, name, config, weight}``, its config dumped with every
        default filled in (``GraderConfig.dump``)."""
        return {"type": self.type, "name": self.name, "config": self.config.dump(), "weight": self.weight}

    def build(self, resources: Resources | None = None) -> Grader:
        """A grader for this spec, doing its I/O through ``resources``."""
        return self.grader_cls(self.config, name=self.name, weight=self.weight, resources=resources)


def compile_spec(raw: Mapping[str, Any] | GraderSpec, *, path: str = "",
                 context: SpecContext | None = None) -> CompiledSpec:
    """Validate a spec and its config. Raises SpecError naming the field path.

    ``context`` carries what validation may need from the caller (the suite's folder, a code
    checker, limits); validation itself does no I/O.
    """
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
    config = cls.parse_config(spec.config, path=_join(path, "config"), context=context)
    return CompiledSpec(cls, config, spec.name or spec.type, spec.weight, spec)


def _join(path: str, field: str) -> str:
    return f"{path}.{field}" if path else field
