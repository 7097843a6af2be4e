"""``vally_output``: Vally's output graders (``output-contains``, ``output-not-contains``,
``output-matches``, ``output-not-matches``) on the sample's final output.

- ``contains``: ``substring`` (``value`` also read) must appear in the output; both are
  lower-cased first unless ``case_sensitive: true`` (Vally's default is false:
  microsoft.github.io/vally/reference/graders/output-contains/).
- ``matches``: ``pattern`` is a JavaScript regular expression tested against the output; a
  leading ``(?flags)`` group (``i``, ``m``, ``s``, combined as ``(?ims)``) sets the flags
  (microsoft.github.io/vally/reference/graders/output-matches/).
- ``negate: true`` passes when the value or pattern is *not* found; the dialect sets it for the
  ``output-not-*`` spellings.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, PrivateAttr, model_validator

from assay.core.grader import Grader, GraderConfig, Taxonomy, Traits
from assay.core.registry import register
from assay.core.result import ErrorCode, GraderResult
from assay.core.sample import Sample
from assay.core.untrusted import TooDeep
from assay.graders._patterns import CompiledPattern, PatternError
from assay.graders._text import as_text, preview

_INLINE_FLAGS = re.compile(r"^\(\?([ims]+)\)")


def vally_pattern(source: str, field: str, *, timeout_s: float = 0.1) -> CompiledPattern:
    """The config field ``field``'s Vally pattern compiled: a leading ``(?ims)`` group becomes
    JavaScript flags, as Vally's output-matches and file-matches graders read it. Raises
    ValueError naming the field (a config validator's error)."""
    m = _INLINE_FLAGS.match(source)
    flags = "".join(dict.fromkeys(m.group(1))) if m else ""
    try:
        return CompiledPattern(source[m.end():] if m else source, flags, timeout_s=timeout_s)
    except PatternError as exc:
        raise ValueError(f"{field}: {exc}") from None


class VallyOutputConfig(GraderConfig):
    mode: Literal["contains", "matches"] = Field(
        description="contains: a literal value; matches: a regular expression.")
    substring: str | None = Field(default=None, description="contains: the text to look for.")
    value: str | None = Field(default=None, description="contains: another spelling of substring.")
    pattern: str | None = Field(default=None, description="matches: the pattern; a leading (?ims) sets flags.")
    case_sensitive: bool = Field(default=False, description="contains: compare case (Vally: false).")
    negate: bool = Field(default=False, description="Pass when the value or pattern is NOT found.")
    timeout_ms: int = Field(default=100, ge=1, le=10_000, description="Bound per search (backtracking only).")

    _pattern: CompiledPattern | None = PrivateAttr(default=None)

    @property
    def compiled(self) -> CompiledPattern | None:
        """Prepared state: the ``matches`` pattern, compiled once."""
        return self._pattern

    @property
    def needle(self) -> str:
        """The ``contains`` text (``substring``, else ``value``)."""
        return self.substring if self.substring is not None else self.value or ""

    @model_validator(mode="after")
    def _check(self) -> VallyOutputConfig:
        if self.mode == "contains":
            if (self.value is None) == (self.substring is None):
                raise ValueError("contains needs substring (or value), exactly one")
            if self.pattern is not None:
                raise ValueError("pattern is for mode matches")
        else:
            if self.pattern is None:
                raise ValueError("matches needs pattern")
            if self.value is not None or self.substring is not None:
                raise ValueError("substring is for mode contains")
            self._pattern = vally_pattern(self.pattern, "pattern", timeout_s=self.timeout_ms / 1000)
        return self


@register
class VallyOutput(Grader[VallyOutputConfig]):
    type = "vally_output"
    description = "Vally's output-contains / output-matches (and negated forms) on the final output."
    traits = Traits()
    taxonomy = Taxonomy(determinism="static", cost="free", reference="reference-free",
                        temporal_scope="trajectory-level", portability="t1-universal")

    def grade(self, sample: Sample) -> GraderResult:
        cfg = self.config
        try:
            text = as_text(sample.output)
        except TooDeep as exc:
            return self.error_result(ErrorCode.INVALID_OUTPUT, f"output is {exc}")
        try:
            found = self.found_in(text)
        except TimeoutError:
            return self.error_result(ErrorCode.TIMEOUT, f"pattern search took over {cfg.timeout_ms} ms")
        what = self.what()
        passed = found != cfg.negate
        reason = f"output {'contains' if found else 'does not contain'} {what}" if cfg.mode == "contains" \
            else f"output {'matches' if found else 'does not match'} {what}"
        return self.scored_result(passed, reason=reason, details={"found": found, "negate": cfg.negate})

    def found_in(self, text: str) -> bool:
        """Whether the value (``contains``) or pattern (``matches``) is in ``text``; a pattern
        search over its time bound raises TimeoutError."""
        cfg = self.config
        if cfg.mode == "contains":
            needle = cfg.needle
            return needle in text if cfg.case_sensitive else needle.lower() in text.lower()
        assert cfg.compiled is not None
        return cfg.compiled.test(text)

    def what(self) -> str:
        """The value or pattern, as reasons show it."""
        cfg = self.config
        if cfg.mode == "contains":
            return f"{preview(cfg.needle, 100)!r}"
        assert cfg.compiled is not None
        return f"/{preview(cfg.compiled.source, 100)}/{cfg.compiled.flags}"
