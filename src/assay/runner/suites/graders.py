"""Grader entries of a suite file compiled into specs: the one place that validates them
(``compile_spec`` under the suite's context) and refuses two graders of one name, with the
file, line and field path of each problem, whatever the dialect."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from assay.core.context import SpecContext
from assay.core.errors import SpecError, format_loc
from assay.core.spec import CompiledSpec, compile_spec
from assay.runner.suites.filemodel import Keys
from assay.runner.yamlsrc import YamlDoc

SPEC_KEYS = ("type", "name", "config", "weight")

Prepare = Callable[[Any, Keys], Any]
"""Turns a dialect's grader entry (at the given keys) into a spec ``{type, name, config, weight}``."""


def compile_graders(entries: Sequence[Any], doc: YamlDoc, at: Keys, context: SpecContext, *,
                    prepare: Prepare | None = None) -> list[CompiledSpec]:
    """Compile the grader entries written at ``at`` in ``doc``, in order.

    ``prepare`` translates a peer's entry into assay's spec first (``fold_grader``, Vally's
    weights); assay's own entries are specs already. Names must be distinct within one list,
    because results, summaries and reviews find a grader by its name.
    """
    out: list[CompiledSpec] = []
    first: dict[str, Keys] = {}
    for i, entry in enumerate(entries):
        here = (*at, i)
        spec = prepare(entry, here) if prepare is not None else entry
        try:
            compiled = compile_spec(spec, path=format_loc(here), context=context)
        except SpecError as exc:
            raise type(exc)(exc.message, path=exc.path, where=doc.where(exc.focus or format_loc(here))) from None
        if compiled.name in first:
            raise SpecError(f"duplicate grader name {compiled.name!r} (also {format_loc(first[compiled.name])}); "
                            "give each grader a distinct `name`", path=format_loc((*here, "name")),
                            where=doc.where(*here))
        first[compiled.name] = here
        out.append(compiled)
    return out


def fold_grader(doc: YamlDoc, entry: Any, keys: Keys, *, default_type: str | None = None) -> dict[str, Any]:
    """A peer's grader entry as a spec ``{type, name, config, weight}``: options written beside
    ``type`` (waza writes ``assertions``, ``script``, ``model``, ``rubric`` there) move into
    ``config``, where the grader's own strict model checks them."""
    if not isinstance(entry, Mapping):
        raise doc.error(f"a grader must be a mapping, got {type(entry).__name__}", *keys)
    spec = {k: entry[k] for k in SPEC_KEYS if k in entry}
    if "type" not in spec and default_type:
        spec["type"] = default_type
    config = spec.get("config")
    if config is None:
        config = {}
    elif not isinstance(config, Mapping):
        raise doc.error("config must be a mapping", *keys, "config")
    config = dict(config)
    for key, value in entry.items():
        if key in SPEC_KEYS:
            continue
        if key in config:
            raise doc.error(f"{key!r} is given both beside type and inside config; keep one", *keys, key)
        config[key] = value
    spec["config"] = config
    return spec
