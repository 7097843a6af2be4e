"""Exports to waza-shaped and Vally-shaped results."""

from __future__ import annotations

import pytest

from assay.core.aggregate import judge_sample
from assay.core.sample import Sample
from assay.core.spec import compile_spec
from assay.runner.exports import result_to_vally, validation, verdict_to_vally

SAMPLE = Sample(id="s", output="deployed to https://x", transcript=[{"type": "tool_call", "name": "bash"}])


def results():
    regex = compile_spec({"type": "regex", "name": "url", "weight": 2, "config": {"must_match": ["https://"]}})
    tools = compile_spec({"type": "tool_calls", "name": "tools", "config": {"forbidden": ["bash"]}})
    human = compile_spec({"type": "human", "name": "review"})
    return [s.build().grade(SAMPLE) for s in (regex, tools, human)]


def test_waza_shape():
    url, tools, review = (validation(r) for r in results())
    assert set(url) == {"identifier", "type", "score", "weight", "passed", "feedback", "details", "duration_ms"}
    assert (url["identifier"], url["type"], url["score"], url["passed"], url["weight"]) == ("url", "regex", 1.0, True, 2.0)
    assert tools["passed"] is False and "forbidden" in tools["feedback"]
    assert review["score"] == 0.0 and review["details"]["assay_status"] == "pending"


def test_vally_shape():
    url, tools, review = (result_to_vally(r) for r in results())
    assert set(url) == {"name", "passed", "score", "evidence", "kind", "metadata"}
    assert url["kind"] == "code" and url["metadata"]["weight"] == 2.0 and url["evidence"]
    assert tools["score"] == 0.0 and tools["evidence"].startswith("forbidden tool call bash")
    assert (review["kind"], review["passed"], review["metadata"]["status"]) == ("human", False, "pending")


def test_verdicts():
    v = judge_sample("s", results())
    doc = verdict_to_vally(v)
    assert doc["id"] == "s" and doc["status"] == "failed" and doc["passed"] is False
    assert doc["score"] == pytest.approx(2 / 3)
    assert len(doc["graderResults"]) == 3
