import pytest


@pytest.mark.parametrize("output, expected, config, passed", [
    ("北京是中国的首都，有着悠久的历史", "首都", {}, True),
    ("北京是中国的首都", "东京", {}, False),
    ("anything", "", {}, True),            # an empty expected is contained
    ("anything", None, {}, True),          # as in the product spec: expected || ''
    ("", "", {}, True),
    ("", "x", {}, False),
    ("Hello World", "world", {}, False),
    ("Hello World", "world", {"ignore_case": True}, True),
    ({"answer": 42}, '"answer":42', {}, True),   # JSON output is searched as compact JSON text
])
def test_contains(grade, output, expected, config, passed):
    r = grade({"type": "contains", "config": config}, output=output, expected=expected)
    assert r.passed is passed
    if not passed:
        assert "does not contain" in r.reason


@pytest.mark.parametrize("output, expected, note", [
    (42, "43", "(output is a number, compared as JSON text)"),
    ("x", ["a", "b"], "(expected is an array, compared as JSON text)"),
    ({"a": 1}, 2, "(output is an object and expected is a number, compared as JSON text)"),
])
def test_reason_says_when_values_were_compared_as_json_text(grade, output, expected, note):
    r = grade({"type": "contains"}, output=output, expected=expected)
    assert r.status == "failed" and r.reason.endswith(note)


def test_text_reason_unchanged(grade):
    assert grade({"type": "contains"}, output="abc", expected="x").reason == "output does not contain 'x'"


def test_values_json_cannot_hold_and_deep_values(grade):
    assert grade({"type": "contains"}, output={1: {2**80}}, expected="1208925819614629174706176").passed
    deep: list = []
    for _ in range(300):
        deep = [deep]
    r = grade({"type": "contains"}, output=deep, expected="x")
    assert (r.status, r.error) == ("error", "invalid_output")
