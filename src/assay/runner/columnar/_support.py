"""Which specs the columnar kernels take, decided without importing pyarrow (so that asking
costs ``assay run`` nothing when the answer is no)."""

from __future__ import annotations

from typing import Any

from assay.core.grader import Grader
from assay.core.spec import CompiledSpec
from assay.graders._patterns import CompiledPattern

KERNEL_TYPES = frozenset({"exact_match", "contains", "regex", "json_schema", "similarity"})
"""Grader types with a columnar kernel (``_dispatch.KERNELS``)."""


def is_preset(cls: type[Grader], config: Any) -> bool:
    """True for the built-in grader of its type (not a subclass, nor a third-party grader
    registered under a preset's name: their own code decides)."""
    return cls.type in KERNEL_TYPES and cls.__module__ == f"assay.graders.{cls.type}" and type(config) is cls.Config


def re2_source(pat: CompiledPattern) -> str | None:
    """The pattern exactly as the regex grader gave it to RE2 (flags as an inline prefix,
    ``\\u{...}`` escapes translated), or None when it runs on the backtracking engine."""
    compiled = getattr(pat, "_re2", None) if pat.engine == "re2" else None
    source = getattr(compiled, "pattern", None)
    return source if isinstance(source, str) else None


def has_kernel(spec: CompiledSpec) -> bool:
    """True when ``spec``'s grader runs as a columnar kernel: a preset grader, and for regex,
    every pattern on RE2."""
    if not is_preset(spec.grader_cls, spec.config):
        return False
    if spec.type == "regex":
        return all(re2_source(check.pattern) is not None for check in spec.config.checks)
    return True
