"""The one Python source check (core.source): compiled, never run, the same for the code
grader's validation and the sandbox's check."""

from __future__ import annotations

import re

import pytest

from assay.core.errors import SpecError
from assay.core.source import check_python_source, compile_python
from assay.core.spec import compile_spec

EVALUATE = "def evaluate(input, output, expected, metadata):\n    return {'passed': True}\n"

# Each of these parses (ast.parse accepts it) and only the compiler refuses it: a check that
# stopped at parsing let them through, to fail at grade time instead.
COMPILER_ONLY = [
    ("return 5\n" + EVALUATE, r"line 1, column 1: 'return' outside function"),
    ("yield 1\n" + EVALUATE, r"line 1, column 1: 'yield' outside function"),
    (EVALUATE + "await something()\n", r"line 3, column 1: 'await' outside function"),
    ("def evaluate(i, o, e, m):\n    await o\n", r"line 2, column 5: 'await' outside async function"),
    (EVALUATE + "for x in []:\n    pass\nbreak\n", r"line 5, column 1: 'break' outside loop"),
    (EVALUATE + "from __future__ import annotations\n", r"line 3, column 1: from __future__ imports must occur"),
]
PARSER = [
    ("def evaluate(i, o, e, m)\n    return {}\n", r"line 1, column \d+: expected ':'"),
    ("x = (\n", r"line 1, column 5: '\(' was never closed"),
]
MISSING = [
    ("def grade(i, o, e, m):\n    return {}\n", r"no top-level function `evaluate` is defined"),
    ("class Evaluator:\n    def evaluate(self):\n        pass\n", r"no top-level function `evaluate` is defined"),
    ("evaluate = lambda *a: {'passed': True}\n", r"no top-level function `evaluate` is defined"),
]


@pytest.mark.parametrize(("source", "problem"), COMPILER_ONLY + PARSER + MISSING)
def test_check_names_the_problem_and_its_line(source, problem):
    message = check_python_source(source)
    assert message is not None
    assert re.search(problem, message), message


@pytest.mark.parametrize(("source", "problem"), COMPILER_ONLY + PARSER + MISSING)
def test_code_grader_rejects_at_validation(source, problem):
    """docs/guides/code-evaluators.md's promise ("When code cannot grade"): a code evaluator that
    cannot run is refused when the spec arrives."""
    with pytest.raises(SpecError, match=r"config: code: .*" + problem):
        compile_spec({"type": "code", "config": {"language": "python", "code": source}})


@pytest.mark.parametrize("source", [
    EVALUATE,
    "async def evaluate(i, o, e, m):\n    return [x async for x in o]\n",
    "import math\n\ndef helper(x):\n    return math.sqrt(x)\n\ndef evaluate(*args):\n    return helper(4)\n",
    "def evaluate(i: Undefined, o: 'str', e, m) -> NotDefinedEither:\n    return {}\n",  # annotations are not evaluated
])
def test_valid_sources_pass(source):
    assert check_python_source(source) is None
    compile_spec({"type": "code", "config": {"language": "python", "code": source}})


def test_nothing_runs():
    source = "import os\nos._exit(3)\nraise SystemExit\n" + EVALUATE
    assert check_python_source(source) is None


def test_another_function_name():
    assert check_python_source(EVALUATE, "grade") is not None
    assert check_python_source("def grade(*a):\n    pass\n", "grade") is None


@pytest.mark.parametrize(("source", "problem"), [
    ("a = 1\x00\n", "null bytes"),
    ("x = " + "-" * 200_000 + "1\n", "nested too deeply"),
    ("x = " + "(" * 300 + ")" * 300 + "\n", "too many nested parentheses"),
])
def test_hostile_sources_are_refused_not_raised(source, problem):
    assert problem in check_python_source(source)


def test_compile_python_is_what_the_sandbox_runs():
    code = compile_python(EVALUATE)
    assert code.co_filename == "<evaluator>"
    namespace: dict = {}
    exec(code, namespace)
    assert namespace["evaluate"](1, 2, 3, {}) == {"passed": True}
