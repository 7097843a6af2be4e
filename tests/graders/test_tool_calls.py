"""tool_calls grader: required / forbidden patterns on names, arguments and results; counts; sequence."""

from __future__ import annotations

import pytest

from assay.core.errors import SpecError
from assay.core.sample import Sample
from assay.core.spec import compile_spec
from assay.core.transcript import parse_transcript

RUN = Sample(id="r", transcript=[
    {"type": "tool_call", "name": "bash", "call_id": "1", "arguments": {"command": "npm run build"}},
    {"type": "tool_result", "call_id": "1", "success": True, "result": "built ok"},
    {"type": "tool_call", "name": "bash", "call_id": "2", "arguments": {"command": "azd up --no-prompt"}},
    {"type": "tool_result", "call_id": "2", "success": False, "result": "quota exceeded"},
    {"type": "tool_call", "name": "read_file", "call_id": "3", "arguments": {"path": "README.md"}},
    {"type": "tool_result", "call_id": "3", "success": True, "result": "# Demo"},
])


def grade(config):
    return compile_spec({"type": "tool_calls", "config": config}).build().grade(RUN)


@pytest.mark.parametrize("config, passed, score", [
    ({"required": ["azd up"]}, True, 1.0),
    ({"required": [{"pattern": "AZD UP"}]}, True, 1.0),                      # case-insensitive like waza
    ({"required": [{"pattern": "AZD UP"}], "ignore_case": False}, False, 0.0),
    ({"required": [{"pattern": "git commit"}]}, False, 0.0),
    ({"required": [{"name": "bash", "arguments": {"command": "^npm"}}]}, True, 1.0),
    ({"required": [{"name": "bas"}]}, False, 0.0),                          # name is anchored
    ({"required": [{"arguments": "README"}]}, True, 1.0),
    ({"required": [{"result": "quota"}]}, True, 1.0),
    ({"required": [{"pattern": "azd", "success": True}]}, False, 0.0),
    ({"required": [{"name": "read_file", "result": "Demo", "success": True}]}, True, 1.0),
    ({"forbidden": ["rm -rf", {"name": "sudo"}]}, True, 1.0),
    ({"forbidden": [{"result": "exceeded"}]}, False, 0.0),
    ({"required": ["azd up"], "forbidden": ["npm"]}, False, 0.5),
    ({"max_calls": 3}, True, 1.0),
    ({"max_calls": 2}, False, 0.0),
    ({"min_calls": 4, "max_calls": 10}, False, 0.5),
    ({"sequence": [{"arguments": {"command": "build"}}, "azd up", {"name": "read_file"}]}, True, 1.0),
    ({"sequence": [{"name": "read_file"}, "azd up"]}, False, 0.0),          # order matters
    ({"sequence": ["build", "README"], "required": ["nothing-here"], "max_calls": 5}, False, 2 / 3),
])
def test_checks(config, passed, score):
    r = grade(config)
    assert (r.passed, r.score) == (passed, pytest.approx(score)), r.reason


def test_details_name_each_check_and_the_calls():
    r = grade({"required": ["azd up"], "forbidden": ["npm"], "sequence": ["README", "build"]})
    rows = {c["check"]: c for c in r.details["checks"]}
    assert rows["required"]["calls"] == [1] and rows["forbidden"]["calls"] == [0]
    assert rows["sequence"]["missing_step"] == 1
    assert "forbidden tool call npm made" in r.reason and "sequence broken at step 2" in r.reason
    assert r.details["tools_used"] == ["bash", "read_file"]


def test_results_paired_without_ids():
    s = Sample(id="x", transcript=parse_transcript([{"role": "tool", "name": "bash", "content": "ls -la"},
                                                    {"type": "tool_result", "name": "bash", "result": "total 0"}]))
    r = compile_spec({"type": "tool_calls", "config": {"required": [{"pattern": "ls -la", "result": "total"}]}}).build().grade(s)
    assert r.passed


@pytest.mark.parametrize("config, message", [
    ({}, "give required"),
    ({"required": [{}]}, "at least one of"),
    ({"required": [{"pattern": "("}]}, r"required\[0\]: invalid regular expression"),
    ({"min_calls": 3, "max_calls": 1}, "min_calls"),
    ({"required": [{"patern": "x"}]}, "unknown field"),
])
def test_config_errors(config, message):
    with pytest.raises(SpecError, match=message):
        compile_spec({"type": "tool_calls", "config": config})


# --- One time budget per sample; hostile patterns and transcripts ---------------------------

def _many_calls(n, text):
    return Sample(id="many", transcript=[{"type": "tool_call", "name": "bash", "call_id": str(i),
                                          "arguments": {"command": text}} for i in range(n)])


def test_one_time_budget_for_the_whole_sample():
    import time

    # Each search backtracks for some milliseconds, well within a bound per search; 5 patterns
    # x 40 calls of them used to add up unbounded (a bound per search of 300 ms allowed 60 s).
    patterns = [{"arguments": {"command": r"^(a|aa)+\1$"}} for _ in range(5)]
    spec = {"type": "tool_calls", "config": {"forbidden": patterns, "timeout_ms": 300}}
    grader = compile_spec(spec).build()
    start = time.perf_counter()
    r = grader.grade(_many_calls(40, "a" * 22 + "!"))
    assert time.perf_counter() - start < 2.3
    assert (r.status, r.error) == ("error", "timeout")
    assert "matching 40 tool calls against 5 patterns took longer than the 300 ms budget per sample" in r.reason


def test_budget_covers_linear_time_patterns_too():
    patterns = [f"step-{i}" for i in range(100)]
    r = compile_spec({"type": "tool_calls", "config": {"required": patterns, "timeout_ms": 1}}).build() \
        .grade(_many_calls(3000, "x" * 500))
    assert r.error == "timeout"
    r = compile_spec({"type": "tool_calls", "config": {"required": patterns[:2]}}).build() \
        .grade(_many_calls(50, "step-1"))
    assert r.status == "failed" and r.score == 0.5  # the default budget is ample for ordinary samples


def test_name_pattern_error_position_counts_in_the_written_pattern():
    with pytest.raises(SpecError, match=r"required\[0\]: invalid regular expression: missing \) at position 3"):
        compile_spec({"type": "tool_calls", "config": {"required": [{"name": "ba("}]}})


def test_reason_quotes_a_preview_of_long_patterns():
    long = "never-" + "x" * 3000
    r = grade({"required": [long], "forbidden": ["bash"]})
    assert len(r.reason) < 400 and long not in r.reason
    assert all(len(c["pattern"]) <= 100 for c in r.details["checks"])


def test_arguments_and_results_that_are_not_plain_json():
    deep: list = []
    for _ in range(300):
        deep = [deep]
    odd = Sample(id="odd", transcript=[
        {"type": "tool_call", "name": "t", "call_id": "1", "arguments": {"n": 2**80, "s": {1, 2}, "k": {3: "v"}}},
        {"type": "tool_result", "call_id": "1", "result": {"big": 2**80}},
    ])
    spec = {"type": "tool_calls", "config": {"required": [{"arguments": "1208925819614629174706176",
                                                           "result": "1208925819614629174706176"}]}}
    assert compile_spec(spec).build().grade(odd).passed
    too_deep = Sample(id="deep", transcript=[{"type": "tool_call", "name": "t", "call_id": "1"},
                                             {"type": "tool_result", "call_id": "1", "result": deep}])
    r = compile_spec({"type": "tool_calls", "config": {"required": [{"result": "x"}]}}).build().grade(too_deep)
    assert (r.status, r.error) == ("error", "invalid_output")
    deep_argument = Sample(id="deep", transcript=[{"type": "tool_call", "name": "t", "arguments": {"a": deep}}])
    r = compile_spec({"type": "tool_calls", "config": {"required": [{"arguments": {"a": "x"}}]}}).build() \
        .grade(deep_argument)
    assert (r.status, r.error) == ("error", "invalid_output")


def test_matchers_are_prepared_state_on_the_config():
    config = compile_spec({"type": "tool_calls", "config": {"required": ["bash"], "forbidden": [{"name": "rm"}]}}).config
    assert {group: len(matchers) for group, matchers in config.matchers.items()} == \
        {"required": 1, "forbidden": 1, "sequence": 0}
    [forbidden] = config.matchers["forbidden"]
    assert forbidden.name.source == "rm" and forbidden.pattern is None
