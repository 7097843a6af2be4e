"""``regex``: the output matches a pattern (JavaScript flag letters), or waza's
``must_match`` / ``must_not_match`` lists (score = checks passed / checks)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any, NamedTuple

from pydantic import Field, PrivateAttr, ValidationInfo, field_validator, model_validator

from assay.core.grader import BatchGrader, GraderConfig, Taxonomy, Traits
from assay.core.messages import Phrase, Said, in_turn
from assay.core.registry import register
from assay.core.result import ErrorCode, GraderResult
from assay.core.sample import Sample
from assay.core.untrusted import MAX_DEPTH, TooDeep
from assay.graders._patterns import CompiledPattern, PatternError, check_flags
from assay.graders._text import as_text, preview

SHOWN = 100
"""Characters of a pattern quoted in a reason or in details; the rest is cut with an ellipsis."""

NO_MATCH = Phrase("regex.no_match", "output does not match {pattern}")
MISSING = Phrase("regex.missing", "missing {pattern}")
FORBIDDEN = Phrase("regex.forbidden", "forbidden {pattern}")
CHECKS_PASSED = Phrase("regex.checks_passed", "{passed}/{total} checks passed")
TIMED_OUT = Phrase("regex.timeout", "pattern {pattern} needs backtracking and exceeded {ms} ms "
                                    "(catastrophic backtracking?)")
ITEM = Phrase("regex.item", "item {index}: {problem}")
UNREADABLE = Phrase("regex.too_deep", "output is nested more than {depth} levels deep")


__all__ = ["CompiledPattern", "PatternCheck", "Regex", "RegexConfig", "check_row", "checks_reason", "failure",
           "match_details", "shown"]


def shown(pat: CompiledPattern) -> str:
    """A pattern as reasons quote it: ``/source/flags``, the source cut to ``SHOWN``."""
    return f"/{preview(pat.source, SHOWN)}/{pat.flags}"


def failure(pat: CompiledPattern, must_match: bool) -> Said:
    """The reason one failed check gives."""
    return (MISSING if must_match else FORBIDDEN)(pattern=shown(pat))


def check_row(pat: CompiledPattern, must_match: bool, matched: bool, ok: bool) -> dict[str, Any]:
    """One check in a result's ``details.checks``."""
    return {"pattern": preview(pat.source, SHOWN), "must_match": must_match, "matched": matched, "passed": ok}


def checks_reason(failures: list[Said], passed: int, total: int) -> str:
    """The reason of a several-check result: its failures, or how many checks passed."""
    if failures:
        return in_turn(failures)
    return CHECKS_PASSED(passed=passed, total=total)


def match_details(text: str, start: int, end: int) -> dict[str, Any]:
    """A single pattern's match as a result's details (long matches cut to 200 characters)."""
    return {"match": text if len(text) <= 200 else preview(text, 200), "span": [start, end]}


class PatternCheck(NamedTuple):
    """One compiled check: ``pattern`` must match the output, or must not (``must_match``)."""

    pattern: CompiledPattern
    must_match: bool


class RegexConfig(GraderConfig):
    flags: str = Field(default="", description="JavaScript flag letters: i m s u g y (g, y: no effect).")
    timeout_ms: int = Field(default=100, ge=1, le=10_000,
                            description="Time bound per search for patterns RE2 cannot run "
                                        "(backreferences, lookaround).")
    pattern: str | None = Field(default=None, description="Pattern the output must match.")
    must_match: list[str] = Field(default_factory=list, description="waza: patterns that must match.")
    must_not_match: list[str] = Field(default_factory=list, description="waza: patterns that must not match.")

    _checks: list[PatternCheck] = PrivateAttr(default_factory=list)

    @property
    def checks(self) -> list[PatternCheck]:
        """Prepared state: every pattern compiled once, when the config is validated, in the
        order ``pattern``, ``must_match``, ``must_not_match``."""
        return self._checks

    @field_validator("flags")
    @classmethod
    def _flags(cls, value: str) -> str:
        try:
            return check_flags(value)
        except PatternError as exc:
            raise ValueError(exc.args[0]) from None

    @field_validator("pattern", "must_match", "must_not_match")
    @classmethod
    def _compiles(cls, value: str | list[str] | None, info: ValidationInfo) -> str | list[str] | None:
        flags = info.data.get("flags", "")
        for i, source in enumerate([value] if isinstance(value, str) else value or []):
            try:
                CompiledPattern(source, flags)
            except PatternError as exc:
                raise ValueError(exc.args[0] if isinstance(value, str) else ITEM(index=i, problem=exc.args[0])) \
                    from None
        return value

    @model_validator(mode="after")
    def _compile(self) -> RegexConfig:
        checks = ([(self.pattern, True)] if self.pattern is not None else []) + \
            [(p, True) for p in self.must_match] + [(p, False) for p in self.must_not_match]
        if not checks:
            raise ValueError("give a pattern, or must_match / must_not_match lists")
        timeout = self.timeout_ms / 1000
        self._checks = [PatternCheck(CompiledPattern(p, self.flags, timeout_s=timeout), expect)
                        for p, expect in checks]
        return self


_TIMED_OUT = object()


def _bounded(pat: CompiledPattern, text: str) -> Any:
    try:
        return pat.search(text)
    except TimeoutError:
        return _TIMED_OUT


@register
class Regex(BatchGrader[RegexConfig]):
    type = "regex"
    description = "Output matches a regular expression (JavaScript flags; RE2, linear time)."
    traits = Traits(api_safe=True, inline=True, form=True, kernel="assay.runner.columnar.regex:grade")
    taxonomy = Taxonomy(reference="reference-free")

    @classmethod
    def traits_for(cls, config: GraderConfig) -> Traits:
        """A pattern that needs backtracking has a time limit, not a bound by the sample's
        size: it is not graded inline, and Arrow's RE2 kernel cannot run it."""
        checks = getattr(config, "checks", None)
        if checks and all(check.pattern.re2_source is not None for check in checks):
            return cls.traits
        return replace(cls.traits, inline=False, kernel=None)

    def grade_batch(self, samples: Sequence[Sample]) -> list[GraderResult]:
        checks = self.config.checks
        if len(checks) == 1 and checks[0].must_match:
            return self._single(samples, checks[0].pattern)
        return [self._many(s, checks) for s in samples]

    def _single(self, samples: Sequence[Sample], pat: CompiledPattern) -> list[GraderResult]:
        texts: list[str] = []
        unreadable: dict[int, Said] = {}
        for i, s in enumerate(samples):
            try:
                texts.append(s.output if s.output.__class__ is str else as_text(s.output))
            except TooDeep:
                unreadable[i] = UNREADABLE(depth=MAX_DEPTH)
                texts.append("")
        if pat.engine == "re2":
            found: list[Any] = pat.search_many(texts)
        else:  # the backtracking engine may time out on any one text
            found = [_bounded(pat, text) for text in texts]
        scored = self.scored_result
        no_match = NO_MATCH(pattern=shown(pat))
        out = []
        for i, m in enumerate(found):
            if unreadable and i in unreadable:
                out.append(self.error_result(ErrorCode.INVALID_OUTPUT, unreadable[i]))
            elif m is None:
                out.append(scored(False, 0.0, no_match))
            elif m is _TIMED_OUT:
                out.append(self._timeout(pat))
            else:
                out.append(scored(True, 1.0, None, match_details(m.text, m.start, m.end)))
        return out

    def _many(self, sample: Sample, checks: list[PatternCheck]) -> GraderResult:
        try:
            text = as_text(sample.output)
        except TooDeep:
            return self.error_result(ErrorCode.INVALID_OUTPUT, UNREADABLE(depth=MAX_DEPTH))
        rows: list[dict[str, Any]] = []
        failures = []
        for pat, expect in checks:
            try:
                found = pat.test(text)
            except TimeoutError:
                return self._timeout(pat)
            ok = found == expect
            rows.append(check_row(pat, expect, found, ok))
            if not ok:
                failures.append(failure(pat, expect))
        passed = sum(r["passed"] for r in rows)
        return self.scored_result(not failures, passed / len(rows), checks_reason(failures, passed, len(rows)),
                                  {"checks": rows})

    def _timeout(self, pat: CompiledPattern) -> GraderResult:
        return self.error_result(ErrorCode.TIMEOUT, TIMED_OUT(pattern=shown(pat), ms=self.config.timeout_ms),
                                 {"engine": pat.engine})
