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


# --- Reasons, error positions, hostile patterns and outputs --------------------------------

def test_reasons_quote_at_most_a_preview_of_the_pattern(grade):
    long = "needle-" + "x" * 5000
    r = grade({"type": "regex", "config": {"pattern": long}}, output="hay")
    assert r.status == "failed" and len(r.reason) < 200 and long not in r.reason
    r = grade({"type": "regex", "config": {"must_match": [long], "must_not_match": ["hay" + "y?" * 3000]}},
              output="hay")
    assert len(r.reason) < 400 and "missing /needle-xxx" in r.reason and "forbidden /hayy?" in r.reason
    assert all(len(c["pattern"]) <= 100 for c in r.details["checks"])


def test_timeout_reason_quotes_a_preview(grade):
    pattern = r"^(a|aa)+\1$" + "|z" * 2000
    r = grade({"type": "regex", "config": {"pattern": pattern, "timeout_ms": 20}}, output="a" * 60 + "!")
    assert r.error == "timeout" and len(r.reason) < 250


@pytest.mark.parametrize("pattern, flags, position", [
    ("(a", "", 2),
    ("(a", "ims", 2),                      # the flags prefix (?ims) does not count
    (r"\u0041\u{1F600}(b)\1(", "u", 21),   # nor do translated JavaScript escapes
    (r"\u{1F600}[", "u", 10),              # regex reports the place after the [
    ("a{2,1}(b)\\1", "i", 2),
])
def test_syntax_error_position_counts_in_the_written_pattern(pattern, flags, position):
    with pytest.raises(SpecError, match=rf"invalid regular expression: .* at position {position}\b"):
        compile_spec({"type": "regex", "config": {"pattern": pattern, "flags": flags}})


def test_javascript_escapes_work_with_the_backtracking_engine(grade):
    r = grade({"type": "regex", "config": {"pattern": r"\u{1F600}(a)\1", "flags": "u"}}, output="x 😀aa")
    assert r.passed and r.details["match"] == "😀aa"


@pytest.mark.parametrize("config, message", [
    ({"pattern": "((a{1000}){1000}){1000}"}, r"unroll to more than"),           # would compile for minutes
    ({"pattern": r"(a)\1((a{1000}){1000}){1000}"}, r"unroll to more than"),
    ({"pattern": "x" * 20_000}, r"pattern is 20,000 characters long; at most 10,000"),
    ({"pattern": "a\ud800"}, r"lone surrogate U\+D800 at position 1"),
])
def test_hostile_patterns_are_refused_promptly(config, message):
    start = time.perf_counter()
    with pytest.raises(SpecError, match=message):
        compile_spec({"type": "regex", "config": config})
    assert time.perf_counter() - start < 2


@pytest.mark.parametrize("pattern", ["b", r"(b)\1?"])
def test_hostile_outputs_give_clean_results(grade, pattern):
    r = grade({"type": "regex", "config": {"pattern": pattern}}, output="a\ud800b")  # lone surrogate
    assert r.passed and r.details["span"] == [2, 3]
    deep: list = []
    for _ in range(300):
        deep = [deep]
    r = grade({"type": "regex", "config": {"pattern": pattern}}, output=deep)
    assert (r.status, r.error) == ("error", "invalid_output")
    r = grade({"type": "regex", "config": {"must_match": [pattern], "must_not_match": ["z"]}}, output={1: {2**80}})
    assert r.status == "failed" and r.reason == f"missing /{pattern}/"


def test_compiled_patterns_are_prepared_state_on_the_config():
    config = compile_spec({"type": "regex", "config": {"pattern": "a", "must_not_match": ["b(?=c)"]}}).config
    assert [(c.pattern.source, c.pattern.engine, c.must_match) for c in config.checks] == [
        ("a", "re2", True), ("b(?=c)", "backtracking", False)]


@pytest.mark.parametrize(("pattern", "code", "args"), [
    ("(a", "regex.problem.missing_paren", {}),
    ("a)", "regex.problem.unbalanced", {}),
    ("[a", "regex.problem.unterminated_set", {}),
    ("*", "regex.problem.nothing_to_repeat", {}),
    ("[z-a]", "regex.problem.bad_range", {}),
    ("a{3,1}(b)\\1", "regex.problem.min_over_max", {}),
    (r"\p{Foo}", "regex.problem.unknown_property", {}),
    (r"(a)\q\1", "regex.problem.bad_escape", {"escape": r"\q"}),
])
def test_the_engines_complaint_is_a_phrase(pattern, code, args):
    """The backtracking engine's English (the regex module's) is kept as the text and said by a
    phrase inside the product's own, so the pages say it in their language."""
    with pytest.raises(SpecError) as caught:
        compile_spec({"type": "regex", "config": {"pattern": pattern}})
    problem = caught.value.message.args["problem"]
    assert problem["code"] in ("regex.invalid_at", "regex.invalid")
    assert problem["args"]["problem"] == {"code": code, "args": args}


def test_a_complaint_without_a_phrase_stays_as_written():
    from assay.graders._regex_words import problem

    assert type(problem("a complaint a newer engine makes")) is str
    assert problem("bad escape \\z").code == "regex.problem.bad_escape"
