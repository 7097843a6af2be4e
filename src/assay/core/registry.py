"""One registry of grader types: a decorator for built-ins, the ``assay.graders``
entry-point group for third-party packages."""

from __future__ import annotations

from importlib.metadata import entry_points
from typing import TypeVar

from assay.core.grader import Grader

ENTRY_POINT_GROUP = "assay.graders"

G = TypeVar("G", bound=type[Grader])

_registry: dict[str, type[Grader]] = {}
_plugins_loaded = False


def register(cls: G) -> G:
    """Class decorator: make ``cls`` available under ``cls.type``."""
    key = cls.type
    existing = _registry.get(key)
    if existing is not None and existing is not cls:
        raise ValueError(f"grader type {key!r} is already registered by {existing.__module__}")
    _registry[key] = cls
    return cls


def _load_plugins() -> None:
    global _plugins_loaded
    if _plugins_loaded:
        return
    _plugins_loaded = True
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        cls = ep.load()
        if cls.type not in _registry:
            register(cls)


def get(type_: str) -> type[Grader] | None:
    _load_plugins()
    return _registry.get(type_)


def all_graders() -> dict[str, type[Grader]]:
    _load_plugins()
    return dict(sorted(_registry.items()))
