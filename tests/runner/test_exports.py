"""Exports to waza-shaped and Vally-shaped results."""

from __future__ import annotations

import pytest

from assay.core.aggregate import judge_sample
from assay.core.sample import Sample
from assay.core.spec import compile_spec
from assay.runner.exports import result_to_vally, result_to_waza, verdict_to_vally, verdict_to_waza

SAMPLE = Sample(id="s", output="deployed to https://x", transcript=[{"type": "tool_call", "name": "bash"}])


def results():
    regex = compile_spec({"type": "regex", "name": "url", "weight": 2, "config": {"must_match": ["https://"]}})
    tools = compile_spec({"type": "tool_calls", "name": "tools", "config": {"forbidden": ["bash"]}})
    human = compile_spec({"type": "human", "name": "review"})
    return [s.build().grade(SAMPLE) for s in (regex, tools, human)]


def test_waza_shape():
    url, tools, review = (result_to_waza(r) for r in results())
    assert set(url) == {"name", "type", "score", "passed", "message", "details", "duration_ms"}
    assert (url["name"], url["type"], url["score"], url["passed"]) == ("url", "regex", 1.0, True)
    assert tools["passed"] is False and "forbidden" in tools["message"]
    assert review["score"] == 0.0 and review["details"]["status"] == "pending"


def test_vally_shape():
    url, tools, review = (result_to_vally(r) for r in results())
    assert set(url) == {"name", "passed", "score", "evidence", "kind", "metadata"}
    assert url["kind"] == "code" and url["metadata"]["weight"] == 2.0 and url["evidence"]
    assert tools["score"] == 0.0 and tools["evidence"].startswith("forbidden tool call bash")
    assert (review["kind"], review["passed"], review["metadata"]["status"]) == ("human", False, "pending")


@pytest.mark.parametrize("export, key", [(verdict_to_waza, "grader_results"), (verdict_to_vally, "graderResults")])
def test_verdicts(export, key):
    v = judge_sample("s", results())
    doc = export(v)
    assert doc["id"] == "s" and doc["status"] == "failed" and doc["passed"] is False
    assert doc["score"] == pytest.approx(2 / 3)
    assert len(doc[key]) == 3
