"""``scoring: logprobs``: the decision mode of binary judges, against the scripted server
(``tests/judge_server.py``) through the real client: what is asked, how P(pass) is summed
over the labels' spellings, the threshold, the reason, and the errors when no decision can be read."""

from __future__ import annotations

import math

import pytest
from judge_server import good, logprobs

import assay
from assay.core.errors import SpecError
from assay.core.interfaces import Resources
from assay.judges import OpenAIJudgeClient

SAMPLE = {"id": "s1", "input": "What is 2 + 2?", "output": "4", "expected": "4"}


@pytest.fixture
def client(judge_server):
    made = OpenAIJudgeClient(base_url=judge_server.url, api_key="k-test", model="judge-test", backoff_s=0.01)
    yield made
    made.close()


def grade(client, type_="llm", **config):
    config.setdefault("scoring", "logprobs")
    if type_ in ("llm",):
        config.setdefault("rubric", "The answer is right.")
    return assay.grade({"type": type_, "config": config}, SAMPLE, resources=Resources(judge_client=client))


@pytest.mark.parametrize("type_", ["llm", "llm_comparison", "prompt"])
def test_the_request_asks_for_one_token_and_its_alternatives_without_a_schema(judge_server, client, type_):
    judge_server.queue(logprobs({"yes": 0.6, "no": 0.3}))
    result = grade(client, type_)
    body = judge_server.requests[0].body
    assert body["logprobs"] is True and body["top_logprobs"] == 20 and body["max_tokens"] == 1
    assert "response_format" not in body
    assert body["messages"][-1]["content"].endswith("Answer with one word: yes or no.")
    assert result.status == "passed" and result.score == pytest.approx(0.6 / 0.9, abs=1e-6)


def test_spellings_of_each_label_are_summed_and_other_tokens_ignored(judge_server, client):
    judge_server.queue(logprobs({"Yes": 0.2, " yes": 0.1, "PASS": 0.05, "No": 0.3, " no": 0.05, "The": 0.25}))
    result = grade(client, threshold=0.5)
    assert result.details["label_probability"] == {"yes": pytest.approx(0.35), "no": pytest.approx(0.35)}
    assert result.score == pytest.approx(0.5) and result.passed  # at the threshold passes
    assert result.reason == "P(pass) 0.500 (yes 0.350, no 0.350 of the first token's probability; threshold 0.5)"


@pytest.mark.parametrize("threshold, passed", [(0.3, True), (0.4, False)])
def test_the_threshold_decides_on_p_pass(judge_server, client, threshold, passed):
    judge_server.queue(logprobs({"yes": 0.35, "no": 0.65}))
    result = grade(client, threshold=threshold)
    assert result.passed is passed and result.score == pytest.approx(0.35)
    assert result.details["p_pass"] == pytest.approx(0.35) and result.details["scoring"] == "logprobs"


def test_an_endpoint_without_logprobs_is_an_unavailable_error_saying_so(judge_server, client):
    judge_server.queue(good("yes"))
    result = grade(client)
    assert result.status == "error" and result.error == "unavailable" and result.score is None
    assert "returned no logprobs" in result.reason and "scoring: parse" in result.reason


def test_alternatives_without_a_label_are_a_parse_failure_naming_the_likeliest(judge_server, client):
    judge_server.queue(logprobs({"The": 0.5, "I": 0.3}))
    result = grade(client)
    assert result.status == "error" and result.error == "parse_failure"
    assert "'The', 'I'" in result.reason


def test_a_client_error_passes_through(judge_server, client):
    from judge_server import status

    judge_server.queue(status(404, message="no such model"))
    result = grade(client)
    assert result.status == "error" and result.error == "unavailable" and "404" in result.reason


def test_the_cache_keeps_the_alternatives(judge_server, tmp_path):
    from assay.judges import JudgeCache

    cached = OpenAIJudgeClient(base_url=judge_server.url, api_key="k-test", model="judge-test",
                               cache=JudgeCache(str(tmp_path / "c.sqlite")))
    try:
        judge_server.queue(logprobs({"yes": 0.8, "no": 0.2}))
        first, again = grade(cached), grade(cached)
    finally:
        cached.close()
    assert len(judge_server.requests) == 1 and again.details["cached"] is True
    assert again.score == pytest.approx(first.score) == pytest.approx(0.8)


def test_logprobs_with_a_non_binary_scale_is_refused_when_validated():
    with pytest.raises(SpecError, match="scoring: logprobs decides pass or fail"):
        assay.grade({"type": "llm", "config": {"rubric": "r", "scoring": "logprobs", "scale": "1-5"}}, SAMPLE)


def test_the_client_reads_duplicate_spellings_once_with_both_probabilities(judge_server, client):
    from judge_server import Behaviour, completion

    body = completion("yes", top_logprobs={"yes": math.log(0.3)})
    body["choices"][0]["logprobs"]["content"][0]["top_logprobs"].append({"token": "yes", "logprob": math.log(0.2)})
    body["choices"][0]["logprobs"]["content"][0]["top_logprobs"].append({"token": "no", "logprob": "bad"})
    judge_server.queue(Behaviour(body=body))
    result = grade(client)
    assert result.details["label_probability"] == {"yes": pytest.approx(0.5), "no": 0.0}


def test_a_stored_decision_config_validates_again_as_it_was():
    from assay.core.spec import compile_spec

    first = compile_spec({"type": "llm", "config": {"rubric": "r", "scoring": "logprobs"}})
    dumped = first.config.model_dump(mode="json", exclude_none=True)
    assert dumped["scale"] == "binary" and dumped["threshold"] == 0.5
    again = compile_spec({"type": "llm", "config": dumped})
    assert again.config == first.config
