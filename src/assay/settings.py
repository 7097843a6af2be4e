"""Settings: every ``ASSAY_*`` environment variable, read once at the composition root (the
CLI, the library's defaults, the service) and passed down. Nothing below reads the
environment itself.

- ``ASSAY_SANDBOX_ALLOW_WEAK`` (``sandbox_allow_weak``, off): run code evaluators even when an
  isolation layer is missing;
- ``ASSAY_CODE_TIMEOUT_MAX_MS`` (``code_timeout_max_ms``, 60000): the largest ``timeout`` a code
  evaluator may ask for;
- ``ASSAY_NODE`` (``node_binary``, ``node`` on PATH): the Node.js executable for Node evaluators;
- ``ASSAY_DEBUG`` (``debug``, off): the CLI shows a traceback for internal errors.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from assay.core.context import DEFAULT_CODE_TIMEOUT_MAX_MS
from assay.core.errors import AssayError

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"", "0", "false", "no", "off"})


@dataclass(frozen=True, slots=True)
class Settings:
    sandbox_allow_weak: bool = False
    code_timeout_max_ms: int = DEFAULT_CODE_TIMEOUT_MAX_MS
    node_binary: str | None = None
    debug: bool = False

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Settings from ``environ`` (default ``os.environ``); AssayError names a bad variable."""
        env = os.environ if environ is None else environ
        return cls(
            sandbox_allow_weak=_flag(env, "ASSAY_SANDBOX_ALLOW_WEAK"),
            code_timeout_max_ms=_positive_int(env, "ASSAY_CODE_TIMEOUT_MAX_MS", DEFAULT_CODE_TIMEOUT_MAX_MS),
            node_binary=env.get("ASSAY_NODE") or None,
            debug=_flag(env, "ASSAY_DEBUG"),
        )


def _flag(env: Mapping[str, str], name: str) -> bool:
    value = env.get(name, "").strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise AssayError(f"{name}={env[name]!r}: use 1 or 0 (also true/false, yes/no, on/off)")


def _positive_int(env: Mapping[str, str], name: str, default: int) -> int:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    if not raw.isdigit() or int(raw) < 1:
        raise AssayError(f"{name}={raw!r}: use a whole number of milliseconds, at least 1")
    return int(raw)
