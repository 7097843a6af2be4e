"""``contains``: the expected text occurs in the output (an empty expected is contained)."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import Field

from assay.core.grader import BatchGrader, GraderConfig
from assay.core.registry import register
from assay.core.result import GraderResult
from assay.core.sample import Sample
from assay.graders._text import as_text, preview


class ContainsConfig(GraderConfig):
    ignore_case: bool = Field(default=False, description="Match case-insensitively.")


@register
class Contains(BatchGrader):
    type = "contains"
    description = "Output contains the expected text; an empty or null expected is contained."
    Config = ContainsConfig

    def grade_batch(self, samples: Sequence[Sample]) -> list[GraderResult]:
        fold = self.config.ignore_case
        verdict = self.verdict
        out = []
        for s in samples:
            needle, hay = s.expected, s.output
            if needle.__class__ is not str:
                needle = as_text(needle)
            if hay.__class__ is not str:
                hay = as_text(hay)
            if fold:
                needle, hay = needle.casefold(), hay.casefold()
            if needle in hay:
                out.append(verdict(True, 1.0))
            else:
                out.append(verdict(False, 0.0, f"output does not contain {preview(needle)!r}"))
        return out
