"""Which specs the columnar kernels take, decided without importing pyarrow (so that asking
costs ``assay run`` nothing when the answer is no).

A grader declares its kernel in its traits (``Traits.kernel``, a ``module:function`` path);
nothing here lists grader types. The kernel reproduces that class's own grading, so it runs
only for a config of the class's own config model (a subclass's traits drop an inherited kernel).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from functools import cache
from typing import Any

from assay.core.grader import Grader
from assay.core.spec import CompiledSpec


def kernel_path(cls: type[Grader[Any]], config: Any) -> str | None:
    """The kernel that grades ``cls`` under ``config``, or None (the object path)."""
    if type(config) is not cls.Config:
        return None
    return cls.traits_for(config).kernel


def has_kernel(spec: CompiledSpec) -> bool:
    """True when ``spec``'s grader runs as a columnar kernel."""
    return kernel_path(spec.grader_cls, spec.config) is not None


@cache
def load_kernel(path: str) -> Callable[..., Any]:
    """The kernel function at ``path`` (``package.module:function``), imported on first use."""
    module, _, name = path.partition(":")
    return getattr(importlib.import_module(module), name)
