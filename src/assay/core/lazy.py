"""Package namespaces whose names load on first use (PEP 562), so that importing a package
does not import everything it offers."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_names(namespace: dict[str, Any], table: Mapping[str, str]) -> tuple[Callable[[str], Any],
                                                                            Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for a package: ``table`` maps each name to the module
    that defines it; a name is imported when first asked for, then kept in ``namespace``."""
    package = namespace.get("__name__", "package")

    def getattr_(name: str) -> Any:
        module = table.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        namespace[name] = value
        return value

    def dir_() -> list[str]:
        return sorted(set(namespace) | set(table))

    return getattr_, dir_
