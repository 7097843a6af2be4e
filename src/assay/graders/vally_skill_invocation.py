"""``vally_skill_invocation``: Vally's ``skill-invocation`` grader
(microsoft.github.io/vally/reference/graders/skill-invocation/).

Collects the skills the run activated and passes when every ``required`` skill was activated
and no ``disallowed`` one was. Names compare exactly (no patterns). At least one list must be
given and no skill may be in both. The activations are the names of the trajectory's
``skill_activation`` events, which the Vally dialect keeps in the run's ``metadata.skills``;
a run without that key falls back to calls of a tool named ``skill`` (its ``skill`` or ``name``
argument), the way Copilot-style agents load skills.
"""

from __future__ import annotations

from pydantic import Field, model_validator

from assay.core.grader import Grader, GraderConfig, Taxonomy, Traits
from assay.core.registry import register
from assay.core.result import GraderResult
from assay.core.sample import Sample


def activated_skills(sample: Sample) -> list[str]:
    """Skill names the run activated, in order."""
    skills = sample.metadata.get("skills")
    if isinstance(skills, list):
        return [s for s in skills if isinstance(s, str)]
    out = []
    for call in sample.tool_calls:
        if call.name == "skill" and call.arguments:
            name = call.arguments.get("skill", call.arguments.get("name"))
            if isinstance(name, str):
                out.append(name)
    return out


class VallySkillInvocationConfig(GraderConfig):
    required: list[str] = Field(default_factory=list, description="Skills that must be activated.")
    disallowed: list[str] = Field(default_factory=list, description="Skills that must not be activated.")

    @model_validator(mode="after")
    def _lists(self) -> VallySkillInvocationConfig:
        if not self.required and not self.disallowed:
            raise ValueError("give required or disallowed skills (or both)")
        both = sorted(set(self.required) & set(self.disallowed))
        if both:
            raise ValueError(f"skill(s) both required and disallowed: {', '.join(both)}")
        return self


@register
class VallySkillInvocation(Grader[VallySkillInvocationConfig]):
    type = "vally_skill_invocation"
    description = "Vally's skill-invocation: required skills activated, disallowed ones not."
    traits = Traits()
    taxonomy = Taxonomy(determinism="static", cost="free", reference="reference-free",
                        temporal_scope="trajectory-level", portability="t1-universal")

    def grade(self, sample: Sample) -> GraderResult:
        seen = activated_skills(sample)
        active = set(seen)
        missing = [s for s in self.config.required if s not in active]
        found = [s for s in self.config.disallowed if s in active]
        problems = ([f"required skill(s) not activated: {', '.join(missing)}"] if missing else []) + \
            ([f"disallowed skill(s) activated: {', '.join(found)}"] if found else [])
        details = {"activated": seen, "missing": missing, "disallowed_found": found}
        if problems:
            return self.scored_result(False, reason="; ".join(problems), details=details)
        return self.scored_result(True, reason="skill activations as required", details=details)
