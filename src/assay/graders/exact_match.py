"""``exact_match``: the output equals the expected value, exactly.

Text compares character for character. Other JSON values compare as values, without
coercion: the number 42 is not the string "42", and (unlike Python's ``==``) ``true`` is not
``1``; an integer does equal the same float (``1`` and ``1.0`` are one JSON number). With
``trim`` or ``ignore_case``, both sides compare as text and a non-text value as its compact
JSON (so there 42 does equal "42").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import Field

from assay.core.grader import BatchGrader, GraderConfig, Traits
from assay.core.messages import Phrase, Said
from assay.core.registry import register
from assay.core.result import ErrorCode, GraderResult, copier
from assay.core.sample import Sample
from assay.core.untrusted import MAX_REASON, TooDeep
from assay.graders._text import as_text, common_prefix_length, describe, json_kind, preview, too_deep

DIFFERS_AT = Phrase("exact_match.differs_at",
                    "output differs from expected at character {index}: got {got}, expected {expected}")
NO_EXPECTED = Phrase("exact_match.no_expected", "no expected value to compare with")
KINDS_DIFFER = Phrase("exact_match.kinds_differ", "output is {output}, expected is {expected}")
VALUES_DIFFER = Phrase("exact_match.values_differ", "output is {output}, expected {expected}")
SAME_JSON = Phrase("exact_match.same_json", "output and expected differ although both are written {json} in JSON")


class ExactMatchConfig(GraderConfig):
    trim: bool = Field(default=False, description="Strip leading and trailing whitespace first "
                                                  "(values that are not text compare as their JSON text).")
    ignore_case: bool = Field(default=False, description="Compare case-insensitively "
                                                         "(values that are not text compare as their JSON text).")


def same_value(a: Any, b: Any) -> bool:
    """JSON equality: ``==``, except that a boolean never equals a number. Iterative, so deep
    values cannot exhaust the stack."""
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if isinstance(x, bool) or isinstance(y, bool):
            if x is not y:
                return False
        elif isinstance(x, dict):
            if not isinstance(y, dict) or x.keys() != y.keys():
                return False
            stack.extend((v, y[k]) for k, v in x.items())
        elif isinstance(x, (list, tuple)):
            if not isinstance(y, (list, tuple)) or len(x) != len(y):
                return False
            stack.extend(zip(x, y))
        elif isinstance(y, (dict, list, tuple)) or x != y:
            return False
    return True


@register
class ExactMatch(BatchGrader[ExactMatchConfig]):
    type = "exact_match"
    description = "Output equals the expected value exactly (options: trim, ignore_case)."
    traits = Traits(api_safe=True, inline=True, form=True, kernel="assay.runner.columnar.exact_match:grade")

    def _normalise(self, value: object) -> str:
        text = as_text(value)
        if self.config.trim:
            text = text.strip()
        if self.config.ignore_case:
            text = text.casefold()
        return text

    def grade_batch(self, samples: Sequence[Sample]) -> list[GraderResult]:
        plain = not (self.config.trim or self.config.ignore_case)
        norm = self._normalise
        scored = self.scored_result
        passed, failed = copier(scored(True, 1.0)), copier(scored(False, 0.0))  # what scored() would build
        out = []
        for s in samples:
            a, b = s.output, s.expected
            try:
                if a.__class__ is str and b.__class__ is str and plain:
                    ok = a == b
                else:
                    ok = same_value(a, b) if plain else norm(a) == norm(b)
                if ok:
                    out.append(passed())
                else:
                    reason = difference_reason(a, b)
                    out.append(failed(reason) if len(reason) <= MAX_REASON else scored(False, 0.0, reason))
            except TooDeep:
                out.append(self.error_result(ErrorCode.INVALID_OUTPUT, too_deep()))
        return out


def difference_reason(output: object, expected: object) -> Said:
    if output.__class__ is str and expected.__class__ is str:  # the common case, as below
        i = common_prefix_length(output, expected)
        return DIFFERS_AT(index=i, got=repr(output[i:i + 40]), expected=repr(expected[i:i + 40]))
    if expected is None:
        return NO_EXPECTED()
    kind = json_kind(output)
    if kind != json_kind(expected):
        return KINDS_DIFFER(output=describe(output), expected=describe(expected))
    if kind in ("a number", "a boolean"):
        return VALUES_DIFFER(output=as_text(output), expected=as_text(expected))
    a = output if output.__class__ is str else as_text(output)
    b = expected if expected.__class__ is str else as_text(expected)
    if a == b:  # e.g. NaN, which JSON writes as null
        return SAME_JSON(json=preview(a, 60))
    i = common_prefix_length(a, b)
    return DIFFERS_AT(index=i, got=repr(a[i:i + 40]), expected=repr(b[i:i + 40]))
