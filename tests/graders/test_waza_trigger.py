"""waza's trigger heuristic (internal/graders/trigger_grader.go, internal/scaffold/triggers.go):
keywords from SKILL.md, USE FOR phrases, positive/negative modes around the threshold."""

from __future__ import annotations

import pytest

from assay.core.context import SpecContext
from assay.core.errors import SpecError
from assay.core.sample import Sample
from assay.core.spec import compile_spec
from assay.runner.resources import default_resources

SKILL = """---
name: azure-deploy
description: "Deploys web apps to Azure. USE FOR: \\"deploy my app\\", \\"publish to azure\\". DO NOT USE FOR: billing"
---
# Azure deploy
Runs azd up for the current project.
"""


def grade(tmp_path, mode, prompt, threshold=None):
    (tmp_path / "skill").mkdir(exist_ok=True)
    (tmp_path / "skill" / "SKILL.md").write_text(SKILL)
    config = {"skill_path": "skill", "mode": mode, **({"threshold": threshold} if threshold is not None else {})}
    spec = compile_spec({"type": "waza_trigger", "name": "t", "config": config},
                        context=SpecContext(base_dir=tmp_path))
    return spec.build(default_resources()).grade(Sample(id="s", input=prompt, output=""))


def test_a_use_for_phrase_in_the_prompt_scores_one(tmp_path):
    r = grade(tmp_path, "positive", "Please deploy my app today")
    assert r.passed and r.score == 1.0 and r.details["phrase_score"] == 1.0


def test_negative_mode_passes_below_the_threshold(tmp_path):
    r = grade(tmp_path, "negative", "What is the weather in Lisbon tomorrow?")
    assert r.passed and r.score < 0.6 and r.reason.startswith("Prompt correctly treated as non-trigger")
    assert not grade(tmp_path, "negative", "publish to azure now").passed


def test_an_empty_prompt_scores_zero_and_a_missing_skill_is_a_config_error(tmp_path):
    assert grade(tmp_path, "positive", "").score == 0.0
    with pytest.raises(SpecError, match="skill_path: reading SKILL.md"):
        compile_spec({"type": "waza_trigger", "name": "t", "config": {"skill_path": "nope", "mode": "positive"}},
                     context=SpecContext(base_dir=tmp_path))
