"""The one mapping between an evaluator row's stored config and the engine's grader spec.

A row stores the product specification's shapes:

- ``preset``: ``{presetType, params}`` → grader ``presetType`` with config ``params``;
- ``code``: ``{language, code, timeout}`` → grader ``code`` with the same three fields;
- ``llm``: the ``llm`` grader's own config; ``composite``: the ``composite`` grader's own config
  (child specs ``{type, name, config, weight}``).

The API, the test endpoint and task runs all compile rows through ``compile_row``; nothing
else knows the shapes. Pure: no database, no I/O (the context carries what validation needs).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from assay.core import registry
from assay.core.context import SpecContext
from assay.core.errors import SpecError
from assay.core.spec import CompiledSpec, GraderSpec, compile_spec
from assay.store.presets import PRESET_TYPES, PresetType

DEFAULT_CODE_TIMEOUT_MS = 5000


def api_types(*, allow_programs: bool = False) -> frozenset[str]:
    """Grader types an API caller may use (inside a composite too): those whose traits say
    ``api_safe``, and, when the operator allows it, those that run programs. Graders that read
    a run's workspace or the server's files are not API-safe: an API sample has no workspace,
    and the server's files are not the caller's."""
    return frozenset(t for t, cls in registry.all_graders().items()
                     if cls.traits.api_safe or (allow_programs and cls.traits.runs_programs))


class PresetShape(BaseModel):
    """A stored preset config: the specification's ``PresetConfig``."""

    model_config = ConfigDict(extra="forbid")

    presetType: PresetType = Field(description="Which preset rule.")
    params: dict[str, Any] = Field(default_factory=dict, description="The rule's parameters (see the preset list).")


class CodeShape(BaseModel):
    """A stored code config: the specification's ``CodeConfig``."""

    model_config = ConfigDict(extra="forbid")

    language: Literal["nodejs", "python"] = Field(description="nodejs or python.")
    code: str = Field(min_length=1, description="Source defining evaluate(input, output, expected, metadata).")
    timeout: int = Field(default=DEFAULT_CODE_TIMEOUT_MS, ge=1, strict=True, description="Time limit in ms.")


def to_spec(evaluator_type: str, config: Mapping[str, Any], name: str, weight: float = 1.0) -> dict[str, Any]:
    """The grader spec ``{type, name, config, weight}`` of a stored evaluator config.

    Raises SpecError (naming the ``config`` field) when the stored shape is not the type's."""
    if not isinstance(config, Mapping):
        raise SpecError("must be an object", path="config")
    try:
        if evaluator_type == "preset":
            preset = PresetShape.model_validate(config)
            return {"type": preset.presetType.value, "name": name, "config": preset.params, "weight": weight}
        if evaluator_type == "code":
            code = CodeShape.model_validate(config)
            return {"type": "code", "name": name, "config": code.model_dump(), "weight": weight}
    except ValidationError as exc:
        raise SpecError.from_validation(exc, path="config") from None
    if evaluator_type in ("llm", "composite"):
        return {"type": evaluator_type, "name": name, "config": dict(config), "weight": weight}
    raise SpecError(f"unknown evaluator type {evaluator_type!r}; use preset, code, llm or composite", path="type")


def from_spec(spec: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """The evaluator type and stored config of a grader spec: the inverse of ``to_spec``."""
    grader_type = spec.get("type")
    config = dict(spec.get("config") or {})
    if grader_type in PRESET_TYPES:
        return "preset", {"presetType": grader_type, "params": config}
    if grader_type == "code":
        return "code", {"language": config.get("language", "python"), "code": config.get("code"),
                        "timeout": config.get("timeout", DEFAULT_CODE_TIMEOUT_MS)}
    if grader_type in ("llm", "composite"):
        return str(grader_type), config
    raise SpecError(f"grader type {grader_type!r} has no evaluator type; use a preset type, code, llm or "
                    "composite", path="type")


def stored_config(compiled: CompiledSpec) -> dict[str, Any]:
    """What a row stores for a validated spec: its type's shape (``from_spec``) holding the
    validated config dumped with every default filled in, so that the row grades as validated,
    whatever the defaults are later, and says which threshold (say) it meant."""
    return from_spec(compiled.dump())[1]


def spec_types(spec: Mapping[str, Any], path: str = "") -> Iterator[tuple[str, Any]]:
    """Every grader type in ``spec`` with its field path: its own, and its composite children's."""
    grader_type = spec.get("type")
    yield f"{path}type", grader_type
    config = spec.get("config")
    if grader_type == "composite" and isinstance(config, Mapping) and isinstance(config.get("graders"), list):
        for i, child in enumerate(config["graders"]):
            if isinstance(child, Mapping):
                yield from spec_types(child, f"{path}config.graders[{i}].")


def check_types(spec: Mapping[str, Any], allowed: frozenset[str]) -> None:
    """Raise SpecError for the first grader type in ``spec`` outside ``allowed``."""
    for path, grader_type in spec_types(spec):
        if grader_type in allowed:
            continue
        grader_cls = registry.get(grader_type) if isinstance(grader_type, str) else None
        if grader_cls is not None and grader_cls.traits.runs_programs:
            raise SpecError(f"{grader_type!r} graders run programs on the server and are not accepted over the "
                            "API (the operator can allow them with ASSAY_API_ALLOW_PROGRAMS=1)", path=path)
        raise SpecError(f"grader type {grader_type!r} is not accepted here; use one of "
                        f"{', '.join(sorted(allowed))}", path=path)


def compile_row(evaluator_type: str, config: Mapping[str, Any], name: str, *, context: SpecContext,
                weight: float = 1.0, allowed: frozenset[str] | None = None) -> CompiledSpec:
    """Validate a stored (or arriving) evaluator config and compile it for grading.

    Errors are SpecErrors whose path is the field as the API and the row spell it
    (``config.params.pattern``, ``config.code``, ``config.graders[0].type``). ``allowed``
    limits the grader types (composite children included), for specs from API callers."""
    spec = to_spec(evaluator_type, config, name, weight)
    if allowed is not None:
        check_types(spec, allowed)
    if evaluator_type != "preset":
        return compile_spec(spec, context=context)
    grader_cls = registry.get(spec["type"])
    if grader_cls is None:  # a preset type is always registered; kept for a clear error all the same
        raise SpecError(f"grader {spec['type']!r} is not available", path="config.presetType")
    parsed = grader_cls.parse_config(spec["config"], path="config.params", context=context)
    return CompiledSpec(grader_cls, parsed, name, weight, GraderSpec.model_validate(spec))
