"""``waza_skill_invocation``: waza's ``skill_invocation`` grader (microsoft/waza
``internal/graders/skill_invocation_grader.go``, ``docs/graders/skill_invocation.md``).

Compares the skills the run invoked, in order, with ``required_skills`` under ``mode``
(required): ``exact_match``, ``in_order`` or ``any_order`` (as ``waza_action_sequence``).
Score = frequency-aware F1; with ``allow_extra: false`` (default true) and more invocations
than required skills, the score is cut by up to 60% (F1 × (1 − 0.6 × extra / invoked)). The
verdict is the mode's match alone. Invocations come from ``metadata.skill_invocations`` (names
or ``{name}``), else the calls of the ``skill`` tool: waza reads ``skill.invoked`` session
events, which its saved transcripts do not keep.

``forbidden_skills`` (waza 0.34, ``docs/graders/skill_invocation.md`` at 44a4b08f): none of
them may be invoked. Alone, the score is 1 when none appears and 0 otherwise (``mode`` not
needed, other skills allowed); with ``required_skills``, a forbidden skill fails the grader
with 0, else the required-skill verdict and score stand.
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from assay.core.grader import Grader, GraderConfig, Taxonomy, Traits
from assay.core.registry import register
from assay.core.result import GraderResult
from assay.core.sample import Sample
from assay.graders._waza import precision_recall_f1, sequence_match, skills_invoked


class WazaSkillInvocationConfig(GraderConfig):
    required_skills: list[str] = Field(default_factory=list, description="Skill names, in the expected order.")
    forbidden_skills: list[str] = Field(default_factory=list, description="Skills that must not be invoked.")
    mode: Literal["exact_match", "in_order", "any_order"] | None = Field(
        default=None, description="How the invocations must match the required skills (needed with them).")
    allow_extra: bool = Field(default=True, description="false: extra invocations lower the score.")

    @model_validator(mode="after")
    def _rules(self) -> WazaSkillInvocationConfig:
        if not self.required_skills and not self.forbidden_skills:
            raise ValueError("at least one of required_skills or forbidden_skills must be non-empty")
        if self.required_skills and self.mode is None:
            raise ValueError("mode: required with required_skills (exact_match, in_order or any_order)")
        return self


@register
class WazaSkillInvocation(Grader[WazaSkillInvocationConfig]):
    type = "waza_skill_invocation"
    description = "waza's skill_invocation grader: skills invoked against required skills; score is F1."
    traits = Traits()
    taxonomy = Taxonomy(temporal_scope="trajectory-level")

    def grade(self, sample: Sample) -> GraderResult:
        required, mode, allow_extra = self.config.required_skills, self.config.mode, self.config.allow_extra
        actual = skills_invoked(sample)
        invoked = [s for s in self.config.forbidden_skills if s in actual]
        if invoked:
            return self.scored_result(False, 0.0, f"Forbidden skills invoked: {', '.join(invoked)}",
                                      {"forbidden_skills": self.config.forbidden_skills, "actual_skills": actual,
                                       "forbidden_violations": invoked})
        if mode is None:
            return self.scored_result(True, 1.0, "No forbidden skills invoked",
                                      {"forbidden_skills": self.config.forbidden_skills, "actual_skills": actual})
        precision, recall, f1 = precision_recall_f1(required, actual)
        extra = len(actual) - len(required)
        score = f1 if allow_extra or extra <= 0 else f1 * (1.0 - extra / len(actual) * 0.6)
        passed, why = sequence_match("exact" if mode == "exact_match" else mode, required, actual,
                                     noun="skills", wanted="required")
        extra_note = f"(got {len(actual)}, expected {len(required)})"
        if not passed:
            reason = why + (f"; Extra invocations not allowed {extra_note}" if not allow_extra and extra > 0 else "")
        elif not allow_extra and extra > 0:
            reason = f"Skill invocation sequence matched but had extra invocations {extra_note}"
        else:
            reason = "Skill invocation sequence matched"
        return self.scored_result(passed, score, reason,
                                  {"mode": mode, "required_skills": required, "actual_skills": actual,
                                   "allow_extra": allow_extra, "precision": precision, "recall": recall, "f1": f1})
