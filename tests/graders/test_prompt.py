"""``prompt``: Vally's scales (threshold 0.5) and waza's pass/fail checks, and how each peer's
loader maps its prompt grader."""

import json
import textwrap

import pytest

import assay
from assay.core.context import SpecContext
from assay.core.errors import SpecError
from assay.core.interfaces import Resources
from assay.core.judge import JudgeReply
from assay.core.result import ErrorCode
from assay.core.spec import compile_spec
from assay.runner.suites import load_suite

SAMPLE = {"id": "s1", "input": "Explain binary search.", "output": "Halve the sorted range until found."}
CHECKS = {"type": "prompt", "config": {"prompt": "Call set_waza_grade_pass if correct, else set_waza_grade_fail.",
                                       "scoring": "checks"}}


def judge(spec, *replies, sample=SAMPLE, fake_judge):
    fake = fake_judge([JudgeReply(text=r if isinstance(r, str) else json.dumps(r)) for r in replies])
    return assay.grade(spec, sample, resources=Resources(judge_client=fake)), fake


@pytest.mark.parametrize("scoring, raw, score, passed", [
    (None, 3, 0.5, True), (None, 2, 0.25, False),                 # Vally: scale_1_5 by default, threshold 0.5
    ("scale_1_10", 5, 4 / 9, False), ("scale_1_10", 6, 5 / 9, True),
    ("binary", 1, 1.0, True), ("binary", 0, 0.0, False),
])
def test_vally_scales_with_threshold_half(fake_judge, scoring, raw, score, passed):
    config = {} if scoring is None else {"scoring": scoring}
    r, fake = judge({"type": "prompt", "config": config}, {"reasoning": "r", "score": raw}, fake_judge=fake_judge)
    assert r.passed is passed and r.score == pytest.approx(score, abs=1e-6) and r.details["threshold"] == 0.5
    assert "Judge whether the output accomplishes the task" in fake.requests[0].messages[1].content


def test_vally_score_outside_scale_is_an_error(fake_judge):
    r, _ = judge({"type": "prompt", "config": {"scoring": "binary"}}, {"reasoning": "r", "score": 3},
                 fake_judge=fake_judge)
    assert r.status == "error" and r.error == ErrorCode.PARSE_FAILURE


@pytest.mark.parametrize("verdicts, score, passed", [
    (["pass"], 1.0, True),
    (["pass", "pass", "fail"], 2 / 3, False),        # waza: passed only with no fail
    (["fail"], 0.0, False),
])
def test_waza_checks(fake_judge, verdicts, score, passed):
    checks = [{"verdict": v, "description": f"c{i}", "reason": "why"} for i, v in enumerate(verdicts)]
    r, fake = judge(CHECKS, {"reasoning": "done", "checks": checks}, fake_judge=fake_judge)
    assert r.passed is passed and r.score == pytest.approx(score)
    assert r.details["passes"] == verdicts.count("pass") and r.details["failures"] == verdicts.count("fail")
    if not passed:
        assert r.reason.startswith("fail: ")
    schema = fake.requests[0].schema["schema"]
    assert schema["properties"]["checks"]["items"]["properties"]["verdict"]["enum"] == ["pass", "fail"]
    assert "set_waza_grade_pass" in fake.requests[0].messages[1].content


def test_waza_tool_call_shapes_are_read(fake_judge):
    calls = {"calls": [{"name": "set_waza_grade_pass", "arguments": {"description": "a", "reason": "ok"}},
                       {"name": "set_waza_grade_fail", "arguments": {"description": "b", "reason": "missing"}}]}
    r, _ = judge(CHECKS, calls, fake_judge=fake_judge)
    assert r.status == "failed" and r.score == 0.5 and r.reason == "fail: b: missing"


@pytest.mark.parametrize("reply, words", [
    ({"reasoning": "hmm", "checks": []}, "no pass or fail verdict"),   # waza would fail with 0; we say error
    ({"reasoning": "hmm"}, "no checks list"),
    ({"checks": [{"verdict": "maybe"}]}, "not pass or fail"),
    ("I cannot assist with that.", "refused"),
])
def test_waza_checks_without_a_verdict_are_errors(fake_judge, reply, words):
    r, _ = judge(CHECKS, reply, fake_judge=fake_judge)
    assert r.status == "error" and r.score is None and words in r.reason


def test_checks_need_a_prompt_and_scales_are_checked():
    with pytest.raises(SpecError, match="needs a prompt"):
        compile_spec({"type": "prompt", "config": {"scoring": "checks"}})
    with pytest.raises(SpecError, match="scoring"):
        compile_spec({"type": "prompt", "config": {"scoring": "scale_1_7"}})
    with pytest.raises(SpecError, match="mode"):
        compile_spec({"type": "prompt", "config": {"mode": "pairwise"}})


def test_continue_session_shows_the_transcript(fake_judge):
    sample = {**SAMPLE, "transcript": [{"type": "tool_call", "name": "grep", "arguments": {"q": "x"}}]}
    spec = {**CHECKS, "config": {**CHECKS["config"], "continue_session": True}}
    _, fake = judge(spec, {"checks": [{"verdict": "pass"}]}, sample=sample, fake_judge=fake_judge)
    assert "name=transcript>>>" in fake.requests[0].messages[1].content and '"grep"' in fake.requests[0].messages[1].content


def test_waza_loader_maps_prompt_to_checks_and_pairwise(tmp_path):
    (tmp_path / "tasks").mkdir()
    (tmp_path / "eval.yaml").write_text(textwrap.dedent("""\
        name: s
        tasks: ["tasks/*.yaml"]
        graders:
          - type: prompt
            name: judge
            model: gpt-4o-mini
            prompt: Call set_waza_grade_pass when done.
          - type: prompt
            name: versus
            config: {prompt: "Which is better?", mode: pairwise}
        """))
    (tmp_path / "tasks" / "t.yaml").write_text("id: t1\ninputs: {prompt: hi, output: hello}\nexpected: hey\n")
    # `prompt` beside `type` is refused from waza 0.24 (strict decoding): read as 0.21
    suite = load_suite(tmp_path / "eval.yaml", context=SpecContext(), waza_version="0.21")
    judge_spec, versus = suite.graders
    assert judge_spec.type == "prompt" and judge_spec.config.scoring == "checks"
    assert judge_spec.config.model == "gpt-4o-mini" and judge_spec.config.pass_threshold == 1.0
    assert versus.type == "pairwise" and versus.config.flip_passes is True and versus.config.prompt == "Which is better?"


def test_vally_loader_keeps_its_names_and_uses_the_stimulus_rubric(tmp_path):
    (tmp_path / "eval.yaml").write_text(textwrap.dedent("""\
        stimuli:
          - name: explain
            prompt: Explain binary search.
            output: Halve the range.
            rubric: ["Mentions sorted input", "Describes halving"]
            graders:
              - type: prompt
                config: {scoring: scale_1_10, threshold: 0.6}
              - type: panel
                config: {models: [a, b, c], prompt: Own prompt}
        """))
    suite = load_suite(tmp_path / "eval.yaml", context=SpecContext())
    prompt, panel = suite.sample_graders["explain"]
    assert prompt.config.scoring == "1-10" and prompt.config.threshold == 0.6
    assert prompt.config.prompt == "- Mentions sorted input\n- Describes halving"
    assert panel.config.prompt == "Own prompt" and [s[1] for s in panel.config.seats] == ["a", "b", "c"]
