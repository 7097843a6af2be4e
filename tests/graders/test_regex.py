import time

import pytest

from assay.core.errors import SpecError
from assay.core.spec import compile_spec


@pytest.mark.parametrize("pattern, flags, output, passed", [
    (r"\d{4}-\d{2}-\d{2}", "", "due 2024-05-01", True),
    (r"^\d{4}-\d{2}-\d{2}$", "", "due 2024-05-01", False),
    ("hello", "i", "HELLO there", True),
    ("hello", "", "HELLO there", False),
    ("^b", "", "a\nb", False),
    ("^b", "m", "a\nb", True),
    ("a.b", "", "a\nb", False),
    ("a.b", "s", "a\nb", True),
    ("首都", "", "北京是中国的首都", True),
    (r"\u9996\u90fd", "u", "北京是中国的首都", True),   # JavaScript \\uXXXX escapes
    (r"\u{1F600}", "u", "smile 😀", True),
    ("x", "gy", "xyz", True),                            # g and y have no effect on a test
    (r"(a)\1", "", "xaay", True),                        # backreference: bounded backtracking engine
    (r"(?<=\$)\d+", "", "cost $42", True),               # lookbehind
    ("^$", "", "", True),
    ("abc$", "", "abc\n", False),                        # $ is end of input, as in JavaScript
])
def test_pattern(grade, pattern, flags, output, passed):
    r = grade({"type": "regex", "config": {"pattern": pattern, "flags": flags}}, output=output)
    assert r.passed is passed, r.reason


def test_match_span_in_details(grade):
    r = grade({"type": "regex", "config": {"pattern": "中国"}}, output="北京是中国的首都")
    assert r.details == {"match": "中国", "span": [3, 5]}


def test_catastrophic_pattern_is_linear(grade):
    start = time.perf_counter()
    r = grade({"type": "regex", "config": {"pattern": "^(a+)+$"}}, output="a" * 40 + "!")
    assert time.perf_counter() - start < 0.2
    assert r.status == "failed"


def test_catastrophic_backreference_pattern_is_bounded(grade):
    start = time.perf_counter()
    r = grade({"type": "regex", "config": {"pattern": r"^(a|aa)+\1$", "timeout_ms": 50}}, output="a" * 60 + "!")
    assert time.perf_counter() - start < 1.0
    assert r.status == "error" and r.error == "timeout"


def test_waza_lists_score_share_of_checks(grade):
    spec = {"type": "regex", "config": {"must_match": ["deployed to .+", "Resource group: .+"],
                                        "must_not_match": ["error|failed", "permission denied"]}}
    r = grade(spec, output="deployed to https://x.example\nerror: quota")
    assert r.passed is False
    assert r.score == 0.5
    assert [c["passed"] for c in r.details["checks"]] == [True, False, False, True]
    assert "missing /Resource group: .+/" in r.reason and "forbidden /error|failed/" in r.reason


@pytest.mark.parametrize("config, message", [
    ({"pattern": "(a"}, r"config\.pattern: invalid regular expression"),
    ({"pattern": "a", "flags": "x"}, r"config\.flags: unknown flag"),
    ({"pattern": "a", "flags": "ii"}, r"given twice"),
    ({"must_match": ["ok", "(b"]}, r"config\.must_match: item 1"),
    ({}, r"give a pattern"),
    ({"pattern": "a", "flag": "i"}, r"config\.flag: unknown field"),
])
def test_invalid_config(config, message):
    with pytest.raises(SpecError, match=message):
        compile_spec({"type": "regex", "config": config})
