"""``waza_action_sequence``: waza's ``action_sequence`` grader (microsoft/waza
``internal/graders/action_sequence_grader.go``, ``docs/graders/action_sequence.md``).

Compares the run's tool names, in call order, with ``expected_actions`` under
``matching_mode`` (required): ``exact_match`` (same list), ``in_order_match`` (expected
actions appear in order, extra calls allowed between) or ``any_order_match`` (each expected
action appears at least as often as listed). Passed by the mode; score = frequency-aware F1
of the calls against the expected actions, whatever the verdict.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from assay.core.grader import Grader, GraderConfig, Taxonomy, Traits
from assay.core.registry import register
from assay.core.result import GraderResult
from assay.core.sample import Sample
from assay.graders._waza import SequenceMode, precision_recall_f1, sequence_match, tools_used

_MODES: dict[str, SequenceMode] = {"exact_match": "exact", "in_order_match": "in_order", "any_order_match": "any_order"}


class WazaActionSequenceConfig(GraderConfig):
    matching_mode: Literal["exact_match", "in_order_match", "any_order_match"] = Field(
        description="How the calls must match the expected actions.")
    expected_actions: list[str] = Field(min_length=1, description="Tool names, in the expected order.")


@register
class WazaActionSequence(Grader[WazaActionSequenceConfig]):
    type = "waza_action_sequence"
    description = "waza's action_sequence grader: tool-call order against expected actions; score is F1."
    traits = Traits()
    taxonomy = Taxonomy(temporal_scope="trajectory-level")

    def grade(self, sample: Sample) -> GraderResult:
        expected, mode = self.config.expected_actions, self.config.matching_mode
        actual = tools_used(sample)
        precision, recall, f1 = precision_recall_f1(expected, actual)
        passed, why = sequence_match(_MODES[mode], expected, actual, noun="actions", wanted="expected")
        return self.scored_result(passed, f1, "Action sequence matched" if passed else why,
                                  {"matching_mode": mode, "expected_actions": expected, "actual_actions": actual,
                                   "precision": precision, "recall": recall, "f1": f1})
