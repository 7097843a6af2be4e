"""``waza_expected``: a waza task's ``expected`` text checks, each graded as a result of its own
(microsoft/waza, from 0.27: ``internal/graders/run.go`` ``evaluateExpectations``).

waza names the results ``_output_contains``, ``_output_not_contains`` and
``_output_contains_any``; matching ignores case (both sides lower-cased).

- ``output_contains``: score = strings found / strings; passed when all are found.
- ``output_not_contains``: score = strings absent / strings; passed when none is found.
- ``output_contains_any``: 1 when any string is found, else 0.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from assay.core.grader import Grader, GraderConfig, Taxonomy, Traits
from assay.core.registry import register
from assay.core.result import ErrorCode, GraderResult
from assay.core.sample import Sample
from assay.core.untrusted import TooDeep
from assay.graders._text import as_text

Rule = Literal["output_contains", "output_not_contains", "output_contains_any"]


class WazaExpectedConfig(GraderConfig):
    rule: Rule = Field(description="Which of the task's `expected` lists this is.")
    values: list[str] = Field(min_length=1, description="The strings of that list, matched ignoring case.")


def _go_list(values: list[str]) -> str:
    return "[" + " ".join(values) + "]"  # Go's %v of a []string


@register
class WazaExpected(Grader[WazaExpectedConfig]):
    type = "waza_expected"
    description = "A waza task's expected.output_contains / output_not_contains / output_contains_any, ignoring case."
    traits = Traits()
    taxonomy = Taxonomy(reference="reference-based")

    def grade(self, sample: Sample) -> GraderResult:
        try:
            output = as_text(sample.output).lower()
        except TooDeep as exc:
            return self.error_result(ErrorCode.INVALID_OUTPUT, f"output is {exc}")
        values = self.config.values
        found = [s for s in values if s.lower() in output]
        n = len(values)
        if self.config.rule == "output_contains":
            missing = [s for s in values if s not in found]
            reason = f"matched {len(found)}/{n} required strings"
            reason += f"; missing: {_go_list(missing)}" if missing else ""
            return self.scored_result(not missing, len(found) / n, reason, {"missing": missing})
        if self.config.rule == "output_not_contains":
            reason = f"{n - len(found)}/{n} excluded strings absent"
            reason += f"; found: {_go_list(found)}" if found else ""
            return self.scored_result(not found, (n - len(found)) / n, reason, {"found": found})
        if found:
            return self.scored_result(True, 1.0, f'found accepted string: "{found[0]}"', {"found": found[0]})
        return self.scored_result(False, 0.0, "none of the accepted strings found")
