"""``panel``: concurrent seats, the four aggregations, disagreement, excluded seats and quorum."""

import json

import pytest

import assay
from assay.core.errors import SpecError
from assay.core.interfaces import Resources
from assay.core.judge import JudgeReply
from assay.core.result import ErrorCode
from assay.core.spec import compile_spec

SAMPLE = {"id": "s1", "input": "task", "output": "answer"}


def by_model(table):
    """A judge answering per model: an int is a score on 1-5, a JudgeReply is returned as is."""
    def respond(request):
        value = table[request.model]
        if isinstance(value, JudgeReply):
            return value
        return JudgeReply(text=json.dumps({"reasoning": f"{request.model} says {value}", "score": value}),
                          model=request.model)
    return respond


def judge(config, table, fake_judge, samples=None):
    fake = fake_judge(by_model(table))
    calls = []
    fake.judge_many = lambda reqs, inner=fake.judge_many: calls.append(len(reqs)) or inner(reqs)
    spec = {"type": "panel", "config": config}
    res = Resources(judge_client=fake)
    if samples is not None:
        return assay.grade_batch(spec, samples, resources=res), fake, calls
    return assay.grade(spec, SAMPLE, resources=res), fake, calls


MODELS = {"models": ["a", "b", "c"]}


def test_all_seats_go_out_in_one_judge_many(fake_judge):
    samples = [{**SAMPLE, "id": str(i)} for i in range(4)]
    results, fake, calls = judge(MODELS, {"a": 5, "b": 5, "c": 5}, fake_judge, samples)
    assert calls == [12] and all(r.passed for r in results)
    assert [r.model for r in fake.requests[:3]] == ["a", "b", "c"]
    assert len({r.cache_key for r in fake.requests[:3]}) == 3


@pytest.mark.parametrize("aggregation, score, passed", [
    ("mean", (1.0 + 0.0 + 0.75) / 3, True),
    ("median", 0.75, True),
    ("min", 0.0, False),
    ("majority", 2 / 3, True),
])
def test_aggregations_and_disagreement(fake_judge, aggregation, score, passed):
    r, _, _ = judge({**MODELS, "aggregation": aggregation}, {"a": 5, "b": 1, "c": 4}, fake_judge)
    assert r.passed is passed and r.score == pytest.approx(score, abs=1e-5)
    d = r.details
    assert [(j["name"], j["score"], j["vote"]) for j in d["judges"]] == [("a", 1.0, True), ("b", 0.0, False),
                                                                          ("c", 0.75, True)]
    assert d["spread"] == 1.0 and d["disagreement"] is True
    assert d["agreement"] == pytest.approx(2 / 3 if passed else 1 / 3, abs=1e-5)
    assert "b says 1" in d["judges"][1]["reasoning"]


def test_majority_needs_more_than_half(fake_judge):
    config = {"models": ["a", "b", "c", "d"], "aggregation": "majority"}
    r, _, _ = judge(config, {"a": 5, "b": 5, "c": 1, "d": 1}, fake_judge)
    assert r.score == 0.5 and r.status == "failed"


def test_unanimous_panel_reports_full_agreement(fake_judge):
    r, _, _ = judge(MODELS, {"a": 4, "b": 4, "c": 4}, fake_judge)
    assert r.details["agreement"] == 1.0 and r.details["spread"] == 0.0 and r.details["disagreement"] is False


def test_a_failing_seat_is_excluded_and_reported(fake_judge):
    table = {"a": 5, "b": JudgeReply(error=ErrorCode.TIMEOUT, message="slow"), "c": 1}
    r, _, _ = judge(MODELS, table, fake_judge)
    assert r.status == "passed" and r.score == 0.5  # mean of the two that answered
    assert r.details["answered"] == 2 and r.details["excluded"] == 1
    b = r.details["judges"][1]
    assert b["status"] == "error" and b["error"] == "timeout" and "score" not in b
    assert "1 judge(s) excluded" in r.reason


@pytest.mark.parametrize("config, code", [
    (MODELS, ErrorCode.PARSE_FAILURE),                         # default quorum: 2 of 3
    ({**MODELS, "min_judges": 2}, ErrorCode.PARSE_FAILURE),
])
def test_too_few_answering_judges_is_an_error(fake_judge, config, code):
    table = {"a": 5, "b": JudgeReply(text="great answer!"), "c": JudgeReply(text='{"score": 9}')}
    r, _, _ = judge(config, table, fake_judge)
    assert r.status == "error" and r.error == code and r.score is None
    assert "only 1 of 3 judges answered" in r.reason and r.details["answered"] == 1


def test_a_quorum_of_one_grades_with_one_answer(fake_judge):
    table = {"a": 5, "b": JudgeReply(text=""), "c": JudgeReply(text="")}
    r, _, _ = judge({**MODELS, "min_judges": 1}, table, fake_judge)
    assert r.status == "passed" and r.details["excluded"] == 2


def test_judges_vary_model_and_prompt(fake_judge):
    config = {"judges": [{"model": "a", "prompt": "Be strict."}, {"name": "lenient", "model": "a",
                                                                   "prompt": "Be lenient."}], "prompt": "Shared."}
    r, fake, _ = judge(config, {"a": 4}, fake_judge)
    assert [j["name"] for j in r.details["judges"]] == ["a", "lenient"]
    texts = [req.messages[1].content for req in fake.requests]
    assert "Be strict." in texts[0] and "Be lenient." in texts[1] and "Shared." not in texts[0]


@pytest.mark.parametrize("config, words", [
    ({}, "exactly one"),
    ({"models": ["a"], "judges": [{"model": "b"}]}, "exactly one"),
    ({"models": ["a", "b"], "min_judges": 3}, "min_judges"),
    ({"models": ["a"], "aggregation": "max"}, "aggregation"),
    ({"judges": [{"model": "a", "temperature": 1}]}, "temperature"),
])
def test_bad_configs(config, words):
    with pytest.raises(SpecError, match=words):
        compile_spec({"type": "panel", "config": config})
