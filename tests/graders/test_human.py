"""human and human_calibration graders: pending until reviewed."""

from __future__ import annotations

import pytest

from assay.core.errors import SpecError
from assay.core.sample import Sample
from assay.core.spec import compile_spec


def test_human_is_pending_with_instructions_and_criteria():
    spec = {"type": "human", "name": "expert", "config": {"instructions": "Check security",
                                                          "criteria": ["No secrets", "Least privilege"]}}
    r = compile_spec(spec).build().grade(Sample(id="a"))
    assert r.status.value == "pending" and r.score is None and r.kind == "human" and not r.passed
    assert r.details == {"instructions": "Check security", "criteria": ["No secrets", "Least privilege"]}
    assert "Check security" in r.reason


def test_calibration_is_pending_and_names_its_grader():
    r = compile_spec({"type": "human_calibration", "config": {"calibrate_grader": "judge"}}).build().grade(Sample(id="a"))
    assert r.status.value == "pending" and r.details["calibrate_grader"] == "judge"


@pytest.mark.parametrize("spec, message", [
    ({"type": "human_calibration", "config": {}}, "calibrate_grader"),
    ({"type": "human", "config": {"criteria": "one"}}, "criteria"),
    ({"type": "human", "config": {"rubric": "x"}}, "unknown field"),
])
def test_config_errors(spec, message):
    with pytest.raises(SpecError, match=message):
        compile_spec(spec)
