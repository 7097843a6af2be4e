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
