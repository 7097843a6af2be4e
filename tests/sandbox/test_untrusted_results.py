"""The same odd returned value, from a Python and from a Node.js evaluator, gives the same result.

Each row sends one hostile value through the `code` grader in both languages, on the real
sandboxes, and checks that both results agree (status, error code, reason, details) and that
every result can be written (``orjson.dumps(result.model_dump())``).
"""

from __future__ import annotations

import math
import re

import orjson
import pytest

from assay.core.interfaces import Resources
from assay.core.sample import Sample
from assay.core.spec import compile_spec
from assay.core.untrusted import TooDeep
from assay.sandbox import SandboxRunner
from assay.sandbox.results import load_json

PYTHON = """
def deep(n):
    v = 1
    for _ in range(n):
        v = [v]
    return {"passed": True, "details": {"v": v}}

def fail(message):
    raise ValueError(message)

def evaluate(input, output, expected, metadata):
    return %s
"""
NODE = """
function deep(n) { let v = 1; for (let k = 0; k < n; k++) v = [v]; return { passed: true, details: { v } }; }
function fail(message) { throw new Error(message); }
module.exports = (input, output, expected, metadata) => (%s);
"""
TOO_LARGE = re.compile(r"the returned value is too large: 10000027 characters of JSON, more than the limit of 1048576")
NOT_JSON = re.compile(r"the returned value is not JSON data: .+")
PRINTED = "x" * 4096 + "\n[... first 4096 of 2000001 characters]"

# (case, Python expression, JavaScript expression, status, error, reason (text or pattern), details)
CASES = [
    ("NaN score", "{'passed': True, 'score': float('nan')}", "{passed: true, score: NaN}",
     "error", "invalid_output", "evaluate() returned `score` 'NaN', expected a finite number in [0, 1]", {}),
    ("infinite score", "{'passed': True, 'score': float('inf')}", "{passed: true, score: Infinity}",
     "error", "invalid_output", "evaluate() returned `score` 'Infinity', expected a finite number in [0, 1]", {}),
    ("NaN passed", "{'passed': float('nan')}", "{passed: NaN}",
     "error", "invalid_output", "evaluate() returned `passed` as str, expected a boolean", {}),
    ("NaN value", "float('nan')", "NaN",
     "error", "invalid_output", "evaluate() returned str, expected an object {passed, score?, reason?, details?}", {}),
    ("non-finite details", "{'passed': True, 'details': {'x': float('nan'), 'y': [float('inf'), -float('inf')]}}",
     "{passed: true, details: {x: NaN, y: [Infinity, -Infinity]}}",
     "passed", None, None, {"x": "NaN", "y": ["Infinity", "-Infinity"]}),
    ("lone surrogates", "{'passed': False, 'reason': 'a\\ud800b', 'details': {'k\\udc00': ['\\udbff']}}",
     "{passed: false, reason: 'a\\ud800b', details: {'k\\udc00': ['\\udbff']}}",
     "failed", None, "a\ufffdb", {"k\ufffd": ["\ufffd"]}),
    ("control characters", "{'passed': True, 'reason': 'a\\x00\\x1b\\x7fb', 'details': {'\\x00': '\\x01'}}",
     "{passed: true, reason: 'a\\x00\\x1b\\x7fb', details: {'\\x00': '\\x01'}}",
     "passed", None, "a\x00\x1b\x7fb", {"\x00": "\x01"}),
    ("10 MB reason", "{'passed': True, 'reason': 'x' * 10_000_000}", "{passed: true, reason: 'x'.repeat(1e7)}",
     "error", "invalid_output", TOO_LARGE, {}),
    ("huge details", "{'passed': True, 'details': {'x': 'y' * 100_000}}", "{passed: true, details: {x: 'y'.repeat(1e5)}}",
     "error", "invalid_output", "evaluate() returned `details` larger than 64 KB", {}),
    ("negative zero", "{'passed': True, 'score': -0.0, 'details': {'z': -0.0}}", "{passed: true, score: -0, details: {z: -0}}",
     "passed", None, None, {"z": 0}),
    ("huge integers", "{'passed': True, 'details': {'n': [2 ** 100, -(2 ** 64), 12345]}}",
     "{passed: true, details: {n: [2n ** 100n, -(2n ** 64n), 12345n]}}",
     "passed", None, None, {"n": [str(2 ** 100), str(-(2 ** 64)), 12345]}),
    ("keys that are not text", "{'passed': True, 'details': {1: 'a', None: 'b', 2.5: 'c', False: 'd'}}",
     "{passed: true, details: {1: 'a', null: 'b', 2.5: 'c', false: 'd'}}",
     "passed", None, None, {"1": "a", "null": "b", "2.5": "c", "false": "d"}),
    ("100 levels", "deep(98)", "deep(98)", "passed", None, None, None),
    ("101 levels", "deep(99)", "deep(99)",
     "error", "invalid_output", "the returned value is nested more than 100 levels deep", {}),
    ("10k levels", "deep(10_000)", "deep(10000)",
     "error", "invalid_output", "the returned value is nested more than 100 levels deep", {}),
    ("a function", "{'passed': True, 'f': len}", "{passed: true, f: Math.max}", "error", "invalid_output", NOT_JSON, {}),
    ("a cycle", "(lambda d: (d.update(me=d), d)[1])({'passed': True})", "((d) => (d.me = d, d))({passed: true})",
     "error", "invalid_output", "the returned value contains a reference cycle (a circular structure)", {}),
    ("printing 2 MB", "(print('x' * 2_000_000), {'passed': True})[1]", "(console.log('x'.repeat(2e6)), {passed: true})",
     "passed", None, None, {"output": PRINTED}),
    ("printing a lone surrogate", "(print('a\\ud800'), {'passed': True})[1]", "(console.log('a\\ud800'), {passed: true})",
     "passed", None, None, {"output": "a\ufffd\n"}),
]


@pytest.mark.parametrize(("text", "value"), [
    (b'{"a": [1, 2.5, "x", null, true]}', {"a": [1, 2.5, "x", None, True]}),
    (b"[NaN, Infinity, -Infinity, -0.0]", ["NaN", "Infinity", "-Infinity", -0.0]),
    (b'["\\ud800", "\\udc00x", "\\ud83d\\ude00"]', ["\ufffd", "\ufffdx", "\U0001f600"]),
    (b"[18446744073709551615, 18446744073709551616, -9223372036854775808, -9223372036854775809]",
     [2 ** 64 - 1, str(2 ** 64), -(2 ** 63), str(-(2 ** 63) - 1)]),
    (b"[1e400, -1e400]", ["Infinity", "-Infinity"]),
    (b'{"\\u0000": "\\u001b"}', {"\x00": "\x1b"}),
])
def test_load_json_normalises(text, value):
    assert load_json(text) == value
    orjson.dumps(load_json(text))


def _nested(depth: int, seed: int):
    """A value about ``depth`` containers deep, with brackets, quotes and backslashes in its strings."""
    import random

    rng = random.Random(seed)
    texts = ["[", "]]", '"{"', "\\", '\\"]', "x"]
    v = rng.choice(texts)
    for _ in range(depth):
        siblings = [rng.choice(texts) for _ in range(rng.randint(0, 3))] + [[[]], {"k[": "]"}][: rng.randint(0, 2)]
        v = {rng.choice(texts): v, "s": siblings} if rng.random() < 0.5 else [*siblings, v]
    return v


def _depth(v) -> int:
    if isinstance(v, (dict, list)):
        return 1 + max(map(_depth, v.values() if isinstance(v, dict) else v), default=0)
    return 0


@pytest.mark.parametrize("depth", [3, 98, 99, 100, 101, 150])
def test_load_json_depth_is_exact(depth):
    """The byte-level depth check agrees with a walk of the value, strings full of brackets or not."""
    for seed in range(20):
        value = _nested(depth, seed)
        text = orjson.dumps(value)
        if _depth(value) <= 100:
            assert load_json(text) == value
        else:
            with pytest.raises(TooDeep):
                load_json(text)


@pytest.mark.parametrize("text", [b"", b"{", b"[1,]", b"\xff", b'"\\x"', b"[" * 100_000])
def test_load_json_refuses(text):
    with pytest.raises(ValueError):
        load_json(text)


@pytest.fixture(scope="module")
def runner():
    with SandboxRunner(size=1) as r:
        yield r


def grade(runner, language: str, expression: str):
    code = (PYTHON if language == "python" else NODE) % expression
    grader = compile_spec({"type": "code", "config": {"language": language, "code": code}}).build(
        Resources(code_runner=runner))
    result = grader.grade(Sample(id="s", input="q", output="o"))
    orjson.dumps(result.model_dump())  # every writer can take it
    return result


@pytest.mark.node_sandbox
@pytest.mark.parametrize(("case", "python", "js", "status", "error", "reason", "details"), CASES,
                         ids=[c[0] for c in CASES])
def test_both_languages_agree(runner, case, python, js, status, error, reason, details):
    results = {lang: grade(runner, lang, expr) for lang, expr in (("python", python), ("nodejs", js))}
    for lang, r in results.items():
        assert (r.status, r.error) == (status, error), (lang, r)
        if isinstance(reason, re.Pattern):
            assert reason.fullmatch(r.reason or ""), (lang, r.reason)
        else:
            assert r.reason == reason, (lang, r.reason)
        if details is not None:
            assert {k: v for k, v in r.details.items() if k != "limits"} == details, lang
    py, js_ = results["python"], results["nodejs"]
    assert (py.status, py.error, py.score) == (js_.status, js_.error, js_.score)
    if py.score is not None:
        assert math.copysign(1.0, py.score) == math.copysign(1.0, js_.score) == 1.0  # no -0.0


@pytest.mark.node_sandbox
def test_a_lone_surrogate_in_the_sample_reaches_both_languages(runner):
    """A sample is passed on as it is (here an unpaired surrogate) and what comes back is clean."""
    sources = {"python": "def evaluate(input, output, expected, metadata):\n    return {'passed': len(output) == 3, 'reason': output}\n",
               "nodejs": "module.exports = (input, output) => ({ passed: output.length === 3, reason: output });"}
    for lang, code in sources.items():
        grader = compile_spec({"type": "code", "config": {"language": lang, "code": code}}).build(
            Resources(code_runner=runner))
        r = grader.grade(Sample(id="s", output="a\ud800b"))
        assert (r.status, r.reason) == ("passed", "a\ufffdb"), (lang, r)
        orjson.dumps(r.model_dump())


@pytest.mark.node_sandbox
def test_huge_error_messages_are_bounded_and_clean(runner):
    """A thrown error's message becomes a reason that fits 4 KB and counts the whole message;
    its stack (details) is bounded too, in both languages."""
    for lang, expr, header in (("python", "fail('bad \\ud800 ' + 'y' * 200_000)", "ValueError: "),
                               ("nodejs", "fail('bad \\ud800 ' + 'y'.repeat(200000))", "Error: ")):
        r = grade(runner, lang, expr)
        assert (r.status, r.error) == ("error", "runtime_error"), lang
        assert r.reason.startswith(header + "bad \ufffd yyy") and len(r.reason) <= 4096, lang
        assert r.reason.endswith(f"yyy… [{len(header) + 6 + 200_000} characters in all]"), (lang, r.reason[-40:])
        assert header + "bad \ufffd yyy" in r.details["traceback"] and len(r.details["traceback"]) <= 16_500, lang
