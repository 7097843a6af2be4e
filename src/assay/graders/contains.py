"""``contains``: the expected text occurs in the output (an empty expected is contained).

Values that are not text are searched, or searched for, as their compact JSON with sorted
keys (``{"answer": 42}`` contains ``"answer":42``); a failure's reason then says so.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import Field

from assay.core.grader import BatchGrader, GraderConfig, Traits
from assay.core.messages import Phrase, Said
from assay.core.registry import register
from assay.core.result import ErrorCode, GraderResult
from assay.core.sample import Sample
from assay.core.untrusted import TooDeep
from assay.graders._text import as_text, json_kind, preview, too_deep

MISSING = Phrase("contains.missing", "output does not contain {needle}")
MISSING_AS_JSON = Phrase("contains.missing_as_json",
                         "output does not contain {needle} ({kinds}, compared as JSON text)")
OUTPUT_IS = Phrase("contains.output_is", "output is {kind}")
EXPECTED_IS = Phrase("contains.expected_is", "expected is {kind}")
BOTH = Phrase("contains.both", "{output} and {expected}")


class ContainsConfig(GraderConfig):
    ignore_case: bool = Field(default=False, description="Match case-insensitively.")


@register
class Contains(BatchGrader[ContainsConfig]):
    type = "contains"
    description = "Output contains the expected text; an empty or null expected is contained."
    traits = Traits(api_safe=True, inline=True, form=True, kernel="assay.runner.columnar.contains:grade")

    def grade_batch(self, samples: Sequence[Sample]) -> list[GraderResult]:
        fold = self.config.ignore_case
        scored = self.scored_result
        out = []
        for s in samples:
            needle, hay = s.expected, s.output
            try:
                if needle.__class__ is not str:
                    needle = as_text(needle)
                if hay.__class__ is not str:
                    hay = as_text(hay)
            except TooDeep:
                out.append(self.error_result(ErrorCode.INVALID_OUTPUT, too_deep()))
                continue
            if fold:
                needle, hay = needle.casefold(), hay.casefold()
            if needle in hay:
                out.append(scored(True, 1.0))
            else:
                out.append(scored(False, 0.0, missing_reason(needle, s.output, s.expected)))
        return out


def missing_reason(needle: str, output: object, expected: object) -> Said:
    shown = repr(preview(needle))
    kinds = [said(kind=json_kind(value)) for said, value in ((OUTPUT_IS, output), (EXPECTED_IS, expected))
             if value is not None and not isinstance(value, str)]
    if not kinds:
        return MISSING(needle=shown)
    return MISSING_AS_JSON(needle=shown, kinds=kinds[0] if len(kinds) == 1 else BOTH(output=kinds[0],
                                                                                      expected=kinds[1]))
