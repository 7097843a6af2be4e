"""The `code` grader: config checks at validation, result validation, and real sandbox runs."""

import math

import orjson
import pytest

import assay
from assay.core.context import SpecContext
from assay.core.errors import SpecError
from assay.core.interfaces import Resources
from assay.core.sample import Sample
from assay.core.spec import compile_spec
from assay.runner.resources import Defaults


@pytest.fixture
def graded(fake_code_runner):
    """Grade one sample with a code spec whose sandbox answers ``value`` (or ``outcome``)."""

    def run(value=None, spec=None, **outcome):
        runner = fake_code_runner(value, **outcome)
        spec = spec or {"type": "code", "config": {"code": "def evaluate(i, o, e, m):\n    return {}"}}
        result = compile_spec(spec).build(Resources(code_runner=runner)).grade(
            Sample(id="s", input="q", output="a", expected="b", metadata={"k": 1}))
        return result, runner

    return run


@pytest.mark.parametrize("code, message", [
    ("def evaluate(i, o, e, m)\n    return {}", r"config: code: syntax error at line 1"),
    ("def grade(i, o, e, m):\n    return {}", r"no top-level function `evaluate`"),
    ("x = (", r"syntax error at line 1"),
])
def test_python_code_checked_at_validation(code, message):
    with pytest.raises(SpecError, match=message):
        compile_spec({"type": "code", "config": {"language": "python", "code": code}})


@pytest.mark.node_sandbox
@pytest.mark.parametrize("code, message", [
    ("module.exports = async function evaluate(i, o) {\n  return {passed: true\n",
     r"code: syntax error at line \d+, column \d+: Unexpected"),  # as Python's are said
    ("const x = 1;", r"does not export a function 'evaluate'"),
])
def test_node_code_checked_at_validation(code, message):
    spec = {"type": "code", "config": {"language": "nodejs", "code": code}}
    with pytest.raises(SpecError, match=message):
        compile_spec(spec, context=Defaults.context())
    compile_spec(spec)  # pure validation, without a checker in the context, starts nothing


def test_validation_is_pure_and_limits_come_from_the_context():
    calls = []
    context = SpecContext(check_code=lambda *args: calls.append(args) or "SyntaxError at line 3: nope",
                          code_timeout_max_ms=1000)
    with pytest.raises(SpecError, match="SyntaxError at line 3"):
        compile_spec({"type": "code", "config": {"language": "nodejs", "code": "x("}}, context=context)
    assert calls == [("nodejs", "x(", "evaluate")]
    with pytest.raises(SpecError, match=r"config\.timeout: Input should be less than or equal to 1000"):
        compile_spec({"type": "code", "config": {"code": "def evaluate(*a): pass", "timeout": 2000}}, context=context)
    assert compile_spec({"type": "code", "config": {"code": "def evaluate(*a): pass", "timeout": 2000}})
    assert compile_spec({"type": "code", "config": {"code": "def evaluate(*a): pass"}}, context=context).config.timeout == 1000


@pytest.mark.parametrize("config, message", [
    ({}, "give either `code`"),
    ({"code": "def evaluate(*a): pass", "assertions": ["True"]}, "not both"),
    ({"assertions": ["len(output) >"]}, r"assertions\[0\] is not a valid Python expression"),
    ({"code": "def evaluate(*a): pass", "timeout": 0}, r"config\.timeout"),
    ({"code": "def evaluate(*a): pass", "timeout": 10**9}, r"config\.timeout: Input should be less than or equal"),
    ({"code": "def evaluate(*a): pass", "language": "ruby"}, r"config\.language"),
])
def test_invalid_config(config, message):
    with pytest.raises(SpecError, match=message):
        compile_spec({"type": "code", "config": config})


def test_arguments_and_defaults(graded):
    result, runner = graded({"passed": True})
    call = runner.calls[0]
    assert (call.language, call.function, call.timeout_ms, call.memory_mb) == ("python", "evaluate", 5000, 128)
    assert call.args == ["q", "a", "b", {"k": 1}]
    assert result.status == "passed" and result.score == 1.0


@pytest.mark.parametrize("value, message", [
    ([1], "list, expected an object"),
    ({"score": 1}, "`passed` as NoneType"),
    ({"passed": 1}, "`passed` as int"),
    ({"passed": True, "score": 1.5}, "outside [0, 1]"),
    ({"passed": True, "score": float("nan")}, "finite number"),
    ({"passed": True, "score": True}, "finite number"),
    ({"passed": True, "reason": 3}, "`reason` as int"),
    ({"passed": True, "details": []}, "`details` as list"),
    ({"passed": True, "details": {"x": "y" * 70_000}}, "larger than 64 KB"),
    ({"passed": True, "extra": 1}, "unknown field(s) extra"),
])
def test_returned_value_is_validated_strictly(value, message, graded):
    result, _ = graded(value)
    assert result.status == "error" and result.error == "invalid_output"
    assert message in result.reason


def _nested(n):
    v = 1
    for _ in range(n):
        v = [v]
    return v


@pytest.mark.parametrize("value, status, reason, details", [
    ({"passed": True, "reason": "a\ud800", "details": {"k\udc00": ["\ud800", 2 ** 100, -0.0]}},
     "passed", "a\ufffd", {"k\ufffd": ["\ufffd", str(2 ** 100), -0.0]}),
    ({"passed": True, "details": {"v": _nested(300)}}, "error", "evaluate() returned `details` nested more than 100", {}),
    ({"passed": True, "details": {1: float("inf"), "s": {1, 2}}}, "passed", None, None),
    ({"passed": True, "score": "NaN"}, "error", "evaluate() returned `score` 'NaN', expected a finite number", {}),
])
def test_a_runner_that_does_not_normalise_cannot_break_a_writer(value, status, reason, details, graded):
    """The sandboxes hand back clean values; the grader's check still copes with one that does not."""
    result, _ = graded(value)
    orjson.dumps(result.model_dump())
    assert result.status == status
    assert reason is None or result.reason.startswith(reason), result.reason
    if details is not None:
        assert {k: v for k, v in result.details.items() if k != "limits"} == details


def test_negative_zero_score_is_zero(graded):
    result, _ = graded({"passed": False, "score": -0.0})
    assert result.score == 0.0 and math.copysign(1.0, result.score) == 1.0


def test_assertion_rows_that_are_not_objects_are_invalid_output(graded):
    spec = {"type": "code", "config": {"assertions": ["True"]}}
    result, _ = graded(["not a row"], spec=spec)
    assert (result.status, result.error) == ("error", "invalid_output")


def test_sandbox_errors_pass_through_with_traceback(graded):
    result, _ = graded(error=assay.ErrorCode.RUNTIME_ERROR, message="ZeroDivisionError: division by zero",
                       traceback='File "<evaluator>", line 2')
    assert (result.status, result.error) == ("error", "runtime_error")
    assert "ZeroDivisionError" in result.reason and "<evaluator>" in result.details["traceback"]


def test_no_runner_is_unavailable():
    spec = compile_spec({"type": "code", "config": {"code": "def evaluate(*a):\n    return {}"}})
    result = spec.build(Resources()).grade(Sample(id="s"))
    assert result.error == "unavailable"


# Real sandbox, through the public library entry point.

def test_python_evaluator_end_to_end():
    code = ("import json\n"
            "async def evaluate(input, output, expected, metadata):\n"
            "    n = len(output)\n"
            "    return {'passed': n >= metadata['min'], 'score': min(1.0, n / metadata['min']),\n"
            "            'reason': f'{n} chars', 'details': {'n': n}}\n")
    r = assay.grade({"type": "code", "config": {"code": code}}, {"output": "北京是中国的首都", "metadata": {"min": 16}})
    assert (r.status, r.score, r.reason, r.details["n"]) == ("failed", 0.5, "8 chars", 8)
    assert r.details["limits"]["memory_mb"] == 128


def test_python_exception_is_runtime_error_with_user_frames():
    code = "def evaluate(input, output, expected, metadata):\n    return 1 / 0\n"
    r = assay.grade({"type": "code", "config": {"code": code}}, {"output": "x"})
    assert (r.status, r.error) == ("error", "runtime_error")
    assert "ZeroDivisionError" in r.reason and "line 2" in r.details["traceback"]


def test_python_timeout():
    code = "def evaluate(input, output, expected, metadata):\n    while True:\n        pass\n"
    r = assay.grade({"type": "code", "config": {"code": code, "timeout": 300}}, {"output": "x"})
    assert (r.status, r.error) == ("error", "timeout")


def test_waza_assertions_with_generator_expressions():
    spec = {"type": "code", "config": {"assertions": [
        "any(kw in output for kw in ['azure', 'deploy'])",
        "len([c for c in tool_calls if c['name'] == 'bash']) == 1",
        "len(errors) == 0",
        "re.search(r'https?://', output) is not None",
    ]}}
    sample = {"output": "deployed to https://x.example",
              "transcript": [{"type": "tool_call", "name": "bash", "arguments": {"command": "azd up"}},
                             {"type": "error", "message": "quota"}]}
    r = assay.grade(spec, sample)
    assert r.score == 0.75 and not r.passed
    assert [a["passed"] for a in r.details["assertions"]] == [True, True, False, True]


def test_assertions_cannot_escape():
    spec = {"type": "code", "config": {"assertions": [
        "open('/etc/passwd').read() != ''",
        "().__class__.__base__.__subclasses__() and __import__('os').system('true') == 0",
    ]}}
    r = assay.grade(spec, {"output": "x"})
    assert r.score == 0.0
    assert all("error" in a for a in r.details["assertions"])


@pytest.mark.node_sandbox
def test_node_keyword_evaluator_end_to_end():
    code = ("const _ = require('lodash');\n"
            "module.exports = async function evaluate(input, output, expected, metadata) {\n"
            "  const found = metadata.keywords.filter(k => output.includes(k));\n"
            "  return { passed: found.length === metadata.keywords.length, score: found.length / metadata.keywords.length,\n"
            "           details: { missing: _.difference(metadata.keywords, found) } };\n"
            "};\n")
    r = assay.grade({"type": "code", "config": {"language": "nodejs", "code": code}},
                    {"output": "北京是中国的首都", "metadata": {"keywords": ["首都", "长城"]}})
    assert (r.status, r.score, r.details["missing"]) == ("failed", 0.5, ["长城"])


def test_printed_output_is_kept_in_details():
    code = "def evaluate(input, output, expected, metadata):\n    print('checking', output)\n    return {'passed': True}\n"
    r = assay.grade({"type": "code", "config": {"code": code}}, {"output": "北京"})
    assert r.passed and r.details["output"].strip() == "checking 北京"
    code = "def evaluate(input, output, expected, metadata):\n    print('about to fail')\n    raise ValueError('bad')\n"
    r = assay.grade({"type": "code", "config": {"code": code}}, {"output": "x"})
    assert r.error == "runtime_error" and "about to fail" in r.details["output"]
    assert "about to fail" not in r.details["traceback"]


@pytest.mark.node_sandbox
def test_node_console_output_is_kept_in_details():
    code = ("module.exports = function evaluate(input, output) {\n"
            "  console.log('checking', output, {n: output.length});\n"
            "  console.error('x'.repeat(5000));\n"
            "  return { passed: true };\n"
            "};\n")
    r = assay.grade({"type": "code", "config": {"language": "nodejs", "code": code}}, {"output": "北京"})
    assert r.passed
    printed = r.details["output"]
    assert printed.startswith('checking 北京 {"n":2}\n') and printed.endswith("[... first 4096 of 5021 characters]")
    code = "module.exports = async (i, o) => { console.log('before'); throw new Error('bad'); };\n"
    r = assay.grade({"type": "code", "config": {"language": "nodejs", "code": code}}, {"output": "x"})
    assert r.error == "runtime_error" and r.details["output"] == "before\n"


def test_assertions_see_the_same_waza_context_as_scripts():
    spec = {"type": "code", "config": {"assertions": [
        "tool_calls[0]['tool'] == 'bash' and tool_calls[0]['args'] == {'command': 'ls'}",
        "task['id'] == 'run-1' and duration_ms == 0",
    ]}}
    r = assay.grade(spec, {"id": "run-1", "output": "ok",
                           "transcript": [{"type": "tool_call", "name": "bash", "arguments": {"command": "ls"}}]})
    assert r.passed, r.details["assertions"]
