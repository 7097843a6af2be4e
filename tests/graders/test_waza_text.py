"""waza's text grader (internal/graders/text_grader.go): contains families, regexes, score = passed / checks."""

import pytest

from assay.core.errors import SpecError


@pytest.mark.parametrize("config, output, passed, score", [
    ({"contains": ["HELLO"]}, "hello world", True, 1.0),                 # contains: any case
    ({"not_contains": ["World"]}, "hello world", False, 0.0),            # not_contains: any case
    ({"contains_cs": ["Hello"]}, "hello world", False, 0.0),             # contains_cs: exact case
    ({"contains_cs": ["hello"]}, "hello world", True, 1.0),
    ({"not_contains_cs": ["World"]}, "hello world", True, 1.0),
    ({"regex_match": ["^Hello"]}, "hello", False, 0.0),                 # regex: case-sensitive
    ({"regex_match": ["(?i)^Hello"]}, "hello", True, 1.0),              # unless (?i)
    ({"regex_not_match": [r"\d+"]}, "abc 12", False, 0.0),
    ({"contains": ["a", "zz"], "not_contains": ["q"], "regex_match": ["b"]}, "abc", False, 0.75),
    ({}, "anything", True, 1.0),                                        # no checks: waza passes
])
def test_text(grade, config, output, passed, score):
    r = grade({"type": "waza_text", "config": config}, output=output)
    assert (r.passed, r.score) == (passed, pytest.approx(score))


def test_failure_reasons(grade):
    r = grade({"type": "waza_text", "config": {"contains": ["x"], "regex_not_match": ["a"]}}, output="a")
    assert r.reason == "Missing expected substring: x; Found forbidden pattern: a"
    assert r.details["failures"] == ["Missing expected substring: x", "Found forbidden pattern: a"]


@pytest.mark.parametrize("pattern", ["(", r"(a)\1", "foo(?=bar)"])   # Go's regexp refuses all three
def test_invalid_regex_is_a_config_error(grade, pattern):
    with pytest.raises(SpecError, match="regex_match item 0"):
        grade({"type": "waza_text", "config": {"regex_match": [pattern]}}, output="")
