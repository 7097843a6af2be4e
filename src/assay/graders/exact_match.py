"""``exact_match``: the output equals the expected value, exactly."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import Field

from assay.core.grader import BatchGrader, GraderConfig
from assay.core.registry import register
from assay.core.result import GraderResult
from assay.core.sample import Sample
from assay.graders._text import as_text, common_prefix_length


class ExactMatchConfig(GraderConfig):
    trim: bool = Field(default=False, description="Strip leading and trailing whitespace first.")
    ignore_case: bool = Field(default=False, description="Compare case-insensitively.")


@register
class ExactMatch(BatchGrader):
    type = "exact_match"
    description = "Output equals the expected value exactly (options: trim, ignore_case)."
    Config = ExactMatchConfig

    def _normalise(self, value: object) -> object:
        if not (self.config.trim or self.config.ignore_case):
            return value
        text = as_text(value)
        if self.config.trim:
            text = text.strip()
        if self.config.ignore_case:
            text = text.casefold()
        return text

    def grade_batch(self, samples: Sequence[Sample]) -> list[GraderResult]:
        plain = not (self.config.trim or self.config.ignore_case)
        norm = self._normalise
        verdict = self.verdict
        out = []
        for s in samples:
            ok = s.output == s.expected if plain else norm(s.output) == norm(s.expected)
            if ok:
                out.append(verdict(True, 1.0))
            else:
                out.append(verdict(False, 0.0, _differ(s.output, s.expected)))
        return out


def _differ(output: object, expected: object) -> str:
    if expected is None:
        return "no expected value to compare with"
    a = output if output.__class__ is str else as_text(output)
    b = expected if expected.__class__ is str else as_text(expected)
    i = common_prefix_length(a, b)
    return f"output differs from expected at character {i}: got {a[i:i + 40]!r}, expected {b[i:i + 40]!r}"
