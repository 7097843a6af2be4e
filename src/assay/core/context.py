"""What validating a grader spec may need from its caller, passed in rather than looked up.

Validation is pure: it reads no files, starts no sandbox and reads no environment. A caller
that knows more (the suite loader knows the suite's folder; the CLI and the service know the
sandbox and the settings) says so in a ``SpecContext``, which reaches every config validator
as pydantic's validation context (``info.context``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Literal

Language = Literal["python", "nodejs"]
SourceCheck = Callable[[Language, str, str], "str | None"]
"""``check(language, source, function)``: the problem with ``source`` (syntax, a missing
function) with its line, or None."""

DEFAULT_CODE_TIMEOUT_MAX_MS = 60_000


@dataclass(frozen=True, slots=True)
class SpecContext:
    """The validation context of a grader spec.

    ``base_dir``: the folder relative paths in a config resolve against (the suite file's
    folder); None means the current directory at grading time. ``check_code``: checks code in
    languages that cannot be checked in-process (Node.js); None skips that check.
    ``code_timeout_max_ms``: the largest ``timeout`` a code evaluator may ask for.

    ``untrusted``: the spec comes from someone other than the operator (a service API caller),
    so it may not make the server read files or reach endpoints and secrets of its choosing:
    judge configs refuse ``rubric_file``, accept ``base_url`` only from ``judge_base_urls`` and
    ``api_key_env`` only from ``judge_key_envs`` (the operator's allow-lists).
    """

    base_dir: Path | None = None
    check_code: SourceCheck | None = None
    code_timeout_max_ms: int = DEFAULT_CODE_TIMEOUT_MAX_MS
    untrusted: bool = False
    judge_base_urls: frozenset[str] = frozenset()
    judge_key_envs: frozenset[str] = frozenset()

    def at(self, base_dir: Path | None) -> SpecContext:
        """The same context with another base folder."""
        return replace(self, base_dir=base_dir)


def spec_context(info_context: Any) -> SpecContext:
    """The SpecContext inside a pydantic ``info.context`` (the default one when absent)."""
    return info_context if isinstance(info_context, SpecContext) else _DEFAULT


_DEFAULT = SpecContext()
