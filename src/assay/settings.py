"""Settings: every ``ASSAY_*`` environment variable, read once at the composition root (the
CLI, the library's defaults, the service) and passed down. Nothing below reads the
environment itself.

- ``ASSAY_SANDBOX_ALLOW_WEAK`` (``sandbox_allow_weak``, off): run code evaluators even when an
  isolation layer is missing;
- ``ASSAY_CODE_TIMEOUT_MAX_MS`` (``code_timeout_max_ms``, 60000): the largest ``timeout`` a code
  evaluator may ask for;
- ``ASSAY_NODE`` (``node_binary``, ``node`` on PATH): the Node.js executable for Node evaluators;
- ``ASSAY_DEBUG`` (``debug``, off): the CLI shows a traceback for internal errors.

LLM judges (``assay.judges``):

- ``ASSAY_JUDGE_BASE_URL``, else ``OPENAI_BASE_URL`` (``judge_base_url``): the OpenAI-compatible
  endpoint; unset means the OpenAI SDK's default;
- ``ASSAY_JUDGE_API_KEY``, else ``OPENAI_API_KEY`` (``judge_api_key``, never shown or logged);
- ``ASSAY_JUDGE_MODEL`` (``judge_model``): the model for judges whose config names none;
- ``ASSAY_JUDGE_CONCURRENCY`` (``judge_concurrency``, 32): judge calls in flight at once, in all;
- ``ASSAY_JUDGE_TIMEOUT_S`` (``judge_timeout_s``, 60): the time limit of one call;
- ``ASSAY_JUDGE_MAX_RETRIES`` (``judge_max_retries``, 4): retries on 429, 5xx and connection errors;
- ``ASSAY_JUDGE_CACHE`` (``judge_cache``, ``~/.cache/assay/judge-cache.sqlite``; ``off`` disables);
- ``ASSAY_JUDGE_PRICES`` (``judge_prices``): a JSON file of prices per million tokens,
  ``{"model": {"input": 0.15, "output": 0.6}}``, for ``cost_usd`` in results.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

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
    judge_base_url: str | None = None
    judge_api_key: str | None = field(default=None, repr=False)
    judge_model: str | None = None
    judge_concurrency: int = 32
    judge_timeout_s: int = 60
    judge_max_retries: int = 4
    judge_cache: str | None = None
    judge_prices: str | None = None
    environ: Mapping[str, str] = field(default_factory=dict, repr=False, compare=False)
    """The environment the settings came from, for judge configs that name their key's variable."""

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Settings from ``environ`` (default ``os.environ``); AssayError names a bad variable."""
        env = os.environ if environ is None else environ
        return cls(
            sandbox_allow_weak=_flag(env, "ASSAY_SANDBOX_ALLOW_WEAK"),
            code_timeout_max_ms=_positive_int(env, "ASSAY_CODE_TIMEOUT_MAX_MS", DEFAULT_CODE_TIMEOUT_MAX_MS),
            node_binary=env.get("ASSAY_NODE") or None,
            debug=_flag(env, "ASSAY_DEBUG"),
            judge_base_url=env.get("ASSAY_JUDGE_BASE_URL") or env.get("OPENAI_BASE_URL") or None,
            judge_api_key=env.get("ASSAY_JUDGE_API_KEY") or env.get("OPENAI_API_KEY") or None,
            judge_model=env.get("ASSAY_JUDGE_MODEL") or None,
            judge_concurrency=_positive_int(env, "ASSAY_JUDGE_CONCURRENCY", 32, "calls"),
            judge_timeout_s=_positive_int(env, "ASSAY_JUDGE_TIMEOUT_S", 60, "seconds"),
            judge_max_retries=_positive_int(env, "ASSAY_JUDGE_MAX_RETRIES", 4, "retries", minimum=0),
            judge_cache=_cache_path(env),
            judge_prices=env.get("ASSAY_JUDGE_PRICES") or None,
            environ=dict(env),
        )


def _flag(env: Mapping[str, str], name: str) -> bool:
    value = env.get(name, "").strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise AssayError(f"{name}={env[name]!r}: use 1 or 0 (also true/false, yes/no, on/off)")


def _positive_int(env: Mapping[str, str], name: str, default: int, unit: str = "milliseconds", *,
                  minimum: int = 1) -> int:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    if not raw.isdigit() or int(raw) < minimum:
        raise AssayError(f"{name}={raw!r}: use a whole number of {unit}, at least {minimum}")
    return int(raw)


def _cache_path(env: Mapping[str, str]) -> str | None:
    raw = env.get("ASSAY_JUDGE_CACHE", "").strip()
    if raw.lower() in ("off", "0", "false", "no"):
        return None
    if raw:
        return raw
    base = env.get("XDG_CACHE_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".cache")
    return os.path.join(base, "assay", "judge-cache.sqlite")
