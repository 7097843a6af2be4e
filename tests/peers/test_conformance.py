"""Conformance with the peers, data-driven: tests/peers/waza/cases.yaml (from waza's Go tests and
source, each citing file, test and commit) and tests/peers/vally/cases.yaml (from Vally's
documentation pages). The facts are the peers'; this code runs them through assay's graders."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from assay.core.sample import Sample
from assay.core.spec import compile_spec
from assay.runner.resources import default_resources

HERE = Path(__file__).parent


def _cases(peer: str) -> list[Any]:
    cases = yaml.safe_load((HERE / peer / "cases.yaml").read_text())
    return [pytest.param(c, id=str(c["source"].get("test") or c["source"].get("rule"))) for c in cases]


def _events(calls: list[Any]) -> list[dict[str, Any]]:
    out = []
    for call in calls:
        call = {"name": call} if isinstance(call, str) else call
        out.append({"type": "tool_call", "name": call["name"], "arguments": call.get("arguments", {})})
    return out


def _grade(case: dict[str, Any]):
    spec = compile_spec({"name": "g", **case["assay"]})
    sample = Sample(id="s", input=case.get("prompt"), output=case.get("output", ""),
                    metadata=case.get("metadata", {}), transcript=_events(case.get("tool_calls", [])))
    return spec.build(default_resources()).grade(sample)


@pytest.mark.parametrize("case", _cases("waza"))
def test_waza_verdicts(case):
    result = _grade(case)
    assert result.passed is case["expect"]["passed"], (case["source"], result.reason)
    if "score" in case["expect"]:
        assert result.score == pytest.approx(case["expect"]["score"]), case["source"]


@pytest.mark.parametrize("case", _cases("vally"))
def test_vally_verdicts(case):
    result = _grade(case)
    assert result.passed is case["expect"]["passed"], (case["source"], result.reason)


def test_every_waza_case_cites_file_test_and_commit():
    for case in yaml.safe_load((HERE / "waza" / "cases.yaml").read_text()):
        assert {"file", "test", "commit"} <= set(case["source"]), case
