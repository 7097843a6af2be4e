"""Typed models of suite files, validated with the file, line and field path of each problem.

Each dialect describes its files as ``FileModel`` subclasses (``AssayFile``; ``WazaEvalFile`` and
``WazaTask``; ``VallyEvalFile``); ``read_model`` validates a YAML document against one.

Unknown keys follow the dialect (DESIGN.md, "Peer dialects"): a model with
``extra="forbid"`` (the default) refuses them, as assay's own format and the peers that
decode strictly do; a model with ``extra="allow"`` ignores them, as a lenient peer does, and
``read_model`` records a warning naming each one, so a typo is seen rather than lost.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from datetime import date
from typing import Annotated, Any, TypeVar, get_args

from pydantic import BaseModel, BeforeValidator, ConfigDict, ValidationError

from assay.core.errors import SpecError, format_loc
from assay.runner.yamlsrc import YamlDoc

Keys = tuple[str | int, ...]
"""Where a value sits in a document: ``("stimuli", 0, "graders")``."""

M = TypeVar("M", bound="FileModel")


class FileModel(BaseModel):
    """Base of the suite file models: strict unless a model sets ``extra="allow"``."""

    model_config = ConfigDict(extra="forbid")


def _scalar_text(value: Any) -> Any:
    # The peers decode YAML scalars into string fields (`version: 1.0` is "1.0"); booleans,
    # lists and mappings stay as they are and fail as text.
    if isinstance(value, (int, float, date)) and not isinstance(value, bool):
        return str(value)
    return value


Text = Annotated[str, BeforeValidator(_scalar_text)]
"""Text written as any YAML scalar (a number or a date reads as its text)."""


Unknown = Callable[[Keys, str, BaseModel], None]
"""Told of a key a lenient model kept (where it sits, the key, the model holding it); a
dialect whose peer refuses such keys in the release read raises SpecError from it."""


def read_model(model: type[M], data: Any, doc: YamlDoc, *at: str | int, warnings: list[str],
               unknown: Unknown | None = None) -> M:
    """``data`` (the value at ``at`` in ``doc``) validated as ``model``.

    Raises SpecError at the line of the first problem, naming every problem with its field
    path; unknown keys a lenient model ignores are appended to ``warnings``, or handed to
    ``unknown`` when given.
    """
    try:
        value = model.model_validate(data)
    except ValidationError as exc:
        raise _located(exc, model, doc, at) from None
    for keys, node in _lenient_models(value, at):
        for key in node.model_extra or {}:
            if unknown is not None:
                unknown(keys, key, node)
                continue
            warnings.append(f"{doc.where(*keys, key)}: {format_loc((*keys, key))}: unknown field {key!r} "
                            f"ignored{_known(type(node))}")
    return value


def _located(exc: ValidationError, model: type[BaseModel], doc: YamlDoc, at: Keys) -> SpecError:
    errors = exc.errors(include_url=False)
    parts = []
    listed: set[tuple[str | int, ...]] = set()
    for err in errors:
        loc = (*at, *err["loc"])
        if err["type"] == "extra_forbidden":
            parent = err["loc"][:-1]
            known = "" if parent in listed else _known(_model_at(model, parent))
            listed.add(parent)
            message = f"unknown field {loc[-1]!r}{known}"
        else:
            message = err["msg"].removeprefix("Value error, ")
        parts.append(f"{format_loc(loc) or '<root>'}: {message}")
    first = (*at, *errors[0]["loc"])
    return SpecError("; ".join(parts), where=doc.where(*first), focus=format_loc(first))


def _known(model: type[BaseModel] | None) -> str:
    if model is None:
        return ""
    return f" (known: {', '.join(f.alias or name for name, f in model.model_fields.items())})"


def _model_at(model: type[BaseModel], loc: tuple[str | int, ...]) -> type[BaseModel] | None:
    """The model class that validates the value at ``loc`` inside ``model``, if one does."""
    current: type[BaseModel] | None = model
    for part in loc:
        if isinstance(part, int):
            continue
        fields = current.model_fields if current is not None else {}
        field = next((f for name, f in fields.items() if (f.alias or name) == part), None)
        current = model_in(field.annotation) if field is not None else None
        if current is None:
            return None
    return current


def model_in(annotation: Any) -> type[BaseModel] | None:
    """The first model class inside a type such as ``list[Stimulus] | None``."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return next((m for m in map(model_in, get_args(annotation)) if m is not None), None)


def _lenient_models(node: Any, at: Keys) -> Iterator[tuple[Keys, BaseModel]]:
    """Every model in a validated tree that kept unknown keys, with where it sits. Only fields
    whose type holds a model are visited, so large free-form values cost nothing."""
    if isinstance(node, BaseModel):
        if node.model_extra:
            yield at, node
        for name, field in type(node).model_fields.items():
            if model_in(field.annotation) is not None:
                yield from _lenient_models(getattr(node, name), (*at, field.alias or name))
    elif isinstance(node, list):
        for i, item in enumerate(node):
            yield from _lenient_models(item, (*at, i))
    elif isinstance(node, dict):
        for key, item in node.items():
            yield from _lenient_models(item, (*at, key))
