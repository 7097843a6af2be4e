"""One registry of grader types, two ways in: the ``register`` decorator (built-ins, and
graders defined in a program) and the ``assay.graders`` entry-point group (third-party
packages, loaded on first use).

Loading is lazy: a built-in grader's module is imported the first time its type is looked up
(``core.builtins.BUILTIN`` names the module of each type), and entry points are read only for a
type no built-in has, or when every grader is listed. A suite pays only for what it uses.

A third-party grader that cannot be used is left out and reported, never fatal: its module
fails to import, the object is not a usable ``Grader`` subclass, or its type is already
taken (a decorated grader keeps its type; between two plugins the first loaded keeps it).
Each one left out gives a ``GraderPluginWarning`` and a ``PluginProblem`` in
``plugin_problems()``, which ``assay graders`` lists; grading with the other graders goes on.
"""

from __future__ import annotations

import importlib
import inspect
import threading
import warnings
from dataclasses import dataclass
from importlib.metadata import EntryPoint, entry_points
from typing import Any, TypeVar

from assay.core.grader import Grader

ENTRY_POINT_GROUP = "assay.graders"

G = TypeVar("G", bound=type[Grader[Any]])


class GraderPluginWarning(UserWarning):
    """A third-party grader was left out of the registry; ``plugin_problems()`` lists them."""


@dataclass(frozen=True, slots=True)
class PluginProblem:
    """A third-party grader left out of the registry, and why."""

    entry_point: str
    """The entry point as declared: ``name = module:attribute``."""
    distribution: str | None
    """The installed package that declares it, when known."""
    problem: str
    """What is wrong, e.g. ``could not be imported: ModuleNotFoundError: ...``."""

    def __str__(self) -> str:
        where = f" (package {self.distribution})" if self.distribution else ""
        return f"{self.entry_point}{where}: {self.problem}"


_registry: dict[str, type[Grader[Any]]] = {}
_from_plugins: dict[str, tuple[str, str | None]] = {}
"""Types registered from entry points: the entry point that gave each, and its package."""
_problems: list[PluginProblem] = []
_plugins_loaded = False
_loading = False
_lock = threading.RLock()  # re-entrant: a plugin's module may itself look up or register graders


def register(cls: G) -> G:
    """Class decorator: make ``cls`` available under ``cls.type``.

    Raises TypeError when ``cls`` is not a usable grader, and ValueError when another
    decorated grader holds its type. A plugin holding it is left out and reported."""
    problem = unusable(cls)
    if problem is not None:
        raise TypeError(f"{getattr(cls, '__qualname__', cls)!r} {problem}")
    key = cls.type
    with _lock:
        existing = _registry.get(key)
        if existing is not None and existing is not cls:
            if key not in _from_plugins:
                raise ValueError(f"grader type {key!r} is already registered by {_origin(existing)}")
            declared, distribution = _from_plugins.pop(key)
            _report(declared, distribution, f"its type {key!r} is taken by {_origin(cls)}")
        _registry[key] = cls
    return cls


def get(type_: str) -> type[Grader[Any]] | None:
    """The grader class registered under ``type_``, or None."""
    found = _registry.get(type_)
    if found is not None:
        return found
    module = _builtins().get(type_)
    if module is not None:
        importlib.import_module(module)  # registers the type
        return _registry.get(type_)
    _load_plugins()
    return _registry.get(type_)


def all_graders() -> dict[str, type[Grader[Any]]]:
    """Every registered grader class by type, sorted by type."""
    for module in sorted(set(_builtins().values())):
        importlib.import_module(module)
    _load_plugins()
    return dict(sorted(_registry.items()))


def _builtins() -> dict[str, str]:
    """The built-in types and their modules (a table; nothing is imported to read it)."""
    from assay.core.builtins import BUILTIN

    return BUILTIN


def plugin_problems() -> list[PluginProblem]:
    """The third-party graders left out, with why, in the order they were found."""
    _load_plugins()
    return list(_problems)


def unusable(obj: object) -> str | None:
    """Why ``obj`` cannot be registered as a grader, or None when it can."""
    if not (isinstance(obj, type) and issubclass(obj, Grader)):
        return f"is not a Grader subclass (it is {_describe(obj)})"
    if not isinstance(getattr(obj, "type", None), str) or not obj.type:
        return "has no `type` (the registry key, a non-empty string)"
    if not isinstance(getattr(obj, "description", None), str):
        return "has no `description` (one line of text)"
    if not hasattr(obj, "Config"):
        return f"names no config model (declare it as class {obj.__name__}(Grader[{obj.__name__}Config]))"
    if inspect.isabstract(obj):
        return f"is abstract: it does not implement {', '.join(sorted(obj.__abstractmethods__))}"
    return None


def _load_plugins() -> None:
    global _plugins_loaded, _loading
    if _plugins_loaded:
        return
    with _lock:
        if _plugins_loaded or _loading:  # _loading: a plugin's module is asking while it loads
            return
        _loading = True
        try:
            try:
                found = list(entry_points(group=ENTRY_POINT_GROUP))
            except Exception as exc:  # noqa: BLE001  broken metadata must not stop grading
                found = []
                _report(f"entry points in group {ENTRY_POINT_GROUP}", None, _failure("could not be listed", exc))
            for ep in found:
                _add_plugin(ep)
        finally:
            _loading = False
            _plugins_loaded = True


def _add_plugin(ep: EntryPoint) -> None:
    declared = f"{ep.name} = {ep.value}"
    distribution = getattr(getattr(ep, "dist", None), "name", None)
    try:
        obj = ep.load()
    except Exception as exc:  # noqa: BLE001  whatever a plugin's import raises, it is reported
        _report(declared, distribution, _failure("could not be imported", exc))
        return
    problem = unusable(obj)
    if problem is not None:
        _report(declared, distribution, problem)
        return
    key = obj.type
    existing = _registry.get(key)
    if existing is None and key in _builtins():
        existing = get(key)  # a built-in type, not imported yet: it still wins
    if existing is obj:  # its module registered it with the decorator as well
        return
    if existing is not None:
        _report(declared, distribution, f"its type {key!r} is already taken by {_origin(existing)}")
        return
    _registry[key] = obj
    _from_plugins[key] = (declared, distribution)


def _report(declared: str, distribution: str | None, problem: str) -> None:
    found = PluginProblem(declared, distribution, problem)
    _problems.append(found)
    warnings.warn(f"assay: grader plugin left out: {found}", GraderPluginWarning, stacklevel=1)


def _failure(what: str, exc: BaseException) -> str:
    return f"{what}: {type(exc).__name__}: {exc}"


def _origin(cls: type[Grader[Any]]) -> str:
    plugin = _from_plugins.get(cls.type)
    if plugin is not None and _registry.get(cls.type) is cls:
        return f"the plugin {plugin[0]}"
    return f"{cls.__module__}.{cls.__qualname__}"


def _describe(obj: object) -> str:
    if isinstance(obj, type):
        return f"the class {obj.__module__}.{obj.__qualname__}"
    return f"a {type(obj).__name__}"
