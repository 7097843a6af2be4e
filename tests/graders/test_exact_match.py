import pytest
from hypothesis import given
from hypothesis import strategies as st

from assay.graders._text import common_prefix_length

EM = {"type": "exact_match"}


@pytest.mark.parametrize("output, expected, config, passed", [
    ("中国", "中国", {}, True),
    ("中国 ", "中国", {}, False),             # exact: no trimming by default
    (" Paris\n", "Paris", {"trim": True}, True),
    ("PARIS", "paris", {}, False),
    ("PARIS", "paris", {"ignore_case": True}, True),
    ("", "", {}, True),
    ("", None, {}, False),
    (None, None, {}, True),
    ({"a": 1}, {"a": 1}, {}, True),           # JSON values compare as values
    ("Straße", "STRASSE", {"ignore_case": True}, True),
])
def test_exact_match(grade, output, expected, config, passed):
    r = grade({**EM, "config": config}, output=output, expected=expected)
    assert r.passed is passed
    assert r.score == (1.0 if passed else 0.0)
    assert r.status == ("passed" if passed else "failed")


def test_reason_points_at_first_difference(grade):
    r = grade(EM, output="北京是中国的首都", expected="北京是日本的首都")
    assert "character 3" in r.reason and "中国" in r.reason


def test_missing_expected_is_explained(grade):
    assert "no expected value" in grade(EM, output="x", expected=None).reason


def test_unknown_option_rejected():
    from assay.core.errors import SpecError
    from assay.core.spec import compile_spec

    with pytest.raises(SpecError, match=r"config\.trimm: unknown field"):
        compile_spec({"type": "exact_match", "config": {"trimm": True}})


@given(st.text(alphabet="ab北", max_size=300), st.text(alphabet="ab北", max_size=300))
def test_common_prefix_length(a, b):
    expected = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    assert common_prefix_length(a, b) == expected
    assert common_prefix_length(a, a + b) == len(a)


# --- Values of different JSON types ----------------------------------------------------------

@pytest.mark.parametrize("output, expected, reason", [
    (42, "42", 'output is a number (42), expected is a string ("42")'),
    ("42", 42, 'output is a string ("42"), expected is a number (42)'),
    (True, "true", 'output is a boolean (true), expected is a string ("true")'),
    (None, "null", 'output is null, expected is a string ("null")'),
    (["a"], '["a"]', 'output is an array (["a"]), expected is a string ("[\\"a\\"]")'),
    ({"a": 1}, '{"a":1}', 'output is an object ({"a":1}), expected is a string ("{\\"a\\":1}")'),
    (True, 1, "output is a boolean (true), expected is a number (1)"),
    ([True], [1], "output differs from expected at character 1: got 'true]', expected '1]'"),
    (42, 43, "output is 42, expected 43"),
])
def test_type_difference_is_explained(grade, output, expected, reason):
    r = grade(EM, output=output, expected=expected)
    assert r.status == "failed" and r.reason == reason


@pytest.mark.parametrize("output, expected, passed", [
    (1, 1.0, True),                      # one JSON number
    (True, 1, False), (0, False, False),  # no coercion between booleans and numbers
    ({"a": [1, {"b": True}]}, {"a": [1, {"b": 1}]}, False),
    ({"a": [1, {"b": None}]}, {"a": [1.0, {"b": None}]}, True),
])
def test_values_compare_without_coercion(grade, output, expected, passed):
    assert grade(EM, output=output, expected=expected).passed is passed


def test_long_and_deep_values(grade):
    deep: list = []
    for _ in range(5000):  # deeper than Python's recursion limit
        deep = [deep]
    assert grade(EM, output=deep, expected=deep).passed
    r = grade({**EM, "config": {"trim": True}}, output=deep, expected="x")
    assert (r.status, r.error) == ("error", "invalid_output")
    big = "x" * 1_000_000
    r = grade(EM, output=big, expected=big[:-1] + "y")
    assert "character 999999" in r.reason and len(r.reason) < 200
    r = grade(EM, output=big, expected=7)
    assert len(r.reason) < 200
