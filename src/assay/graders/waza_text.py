"""``waza_text``: waza's ``text`` grader (microsoft/waza ``internal/graders/text_grader.go``).

Six check lists against the output: ``contains`` / ``not_contains`` (substrings, case-
insensitive), ``contains_cs`` / ``not_contains_cs`` (case-sensitive), ``regex_match`` /
``regex_not_match`` (Go RE2 patterns, case-sensitive unless written with ``(?i)``). Passed
when every check passes; score = passed checks / checks (1.0 with none).
"""

from __future__ import annotations

from pydantic import Field, PrivateAttr, model_validator

from assay.core.grader import Grader, GraderConfig, Taxonomy, Traits
from assay.core.registry import register
from assay.core.result import ErrorCode, GraderResult
from assay.core.sample import Sample
from assay.core.untrusted import TooDeep
from assay.graders._patterns import CompiledPattern
from assay.graders._text import as_text
from assay.graders._waza import check_patterns, checks_result, go_pattern


class WazaTextConfig(GraderConfig):
    contains: list[str] = Field(default_factory=list, description="Substrings that must appear (any case).")
    not_contains: list[str] = Field(default_factory=list, description="Substrings that must not appear (any case).")
    contains_cs: list[str] = Field(default_factory=list, description="Substrings that must appear (exact case).")
    not_contains_cs: list[str] = Field(default_factory=list,
                                       description="Substrings that must not appear (exact case).")
    regex_match: list[str] = Field(default_factory=list, description="Go regexps that must match somewhere.")
    regex_not_match: list[str] = Field(default_factory=list, description="Go regexps that must match nowhere.")

    _regexes: list[tuple[CompiledPattern, bool]] = PrivateAttr(default_factory=list)

    @property
    def regexes(self) -> list[tuple[CompiledPattern, bool]]:
        """Prepared state: each pattern compiled once, with whether it must match."""
        return self._regexes

    @model_validator(mode="after")
    def _compile(self) -> WazaTextConfig:
        check_patterns(self.regex_match, "regex_match")
        check_patterns(self.regex_not_match, "regex_not_match")
        self._regexes = [(go_pattern(p), True) for p in self.regex_match] + \
            [(go_pattern(p), False) for p in self.regex_not_match]
        return self


@register
class WazaText(Grader[WazaTextConfig]):
    type = "waza_text"
    description = "waza's text grader: substring (any case / exact case) and regex checks on the output."
    traits = Traits()
    taxonomy = Taxonomy(reference="reference-free")

    def grade(self, sample: Sample) -> GraderResult:
        try:
            text = as_text(sample.output)
        except TooDeep as exc:
            return self.error_result(ErrorCode.INVALID_OUTPUT, f"output is {exc}")
        c = self.config
        lower = text.lower()
        failures = [f"Missing expected substring: {s}" for s in c.contains if s.lower() not in lower]
        failures += [f"Found forbidden substring: {s}" for s in c.not_contains if s.lower() in lower]
        failures += [f"Missing expected substring (case-sensitive): {s}" for s in c.contains_cs if s not in text]
        failures += [f"Found forbidden substring (case-sensitive): {s}" for s in c.not_contains_cs if s in text]
        for pat, must in c.regexes:
            try:
                found = pat.test(text)
            except TimeoutError:
                return self.error_result(ErrorCode.TIMEOUT, f"pattern {pat.source!r} exceeded its time bound")
            if found != must:
                failures.append(f"{'Missing expected' if must else 'Found forbidden'} pattern: {pat.source}")
        total = sum(map(len, (c.contains, c.not_contains, c.contains_cs, c.not_contains_cs,
                              c.regex_match, c.regex_not_match)))
        return checks_result(self, failures, total, "text")
