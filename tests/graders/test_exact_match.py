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
