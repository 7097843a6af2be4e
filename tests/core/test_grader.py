"""The grader contract: the config as the type parameter, the result builders, and the
documentation a newcomer reads (the `Grader` docstring and docs/concepts/custom-graders.md run as written)."""

import ast
import inspect
import re
import textwrap
from pathlib import Path

import pytest
from pydantic import Field

from assay.core import registry, result
from assay.core.grader import BatchGrader, Grader, GraderConfig
from assay.core.registry import register
from assay.core.result import ErrorCode, GraderResult, Status
from assay.core.sample import Sample
from assay.core.spec import compile_spec
from assay.core.untrusted import MAX_REASON
from assay.graders._text import as_text

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "concepts" / "custom-graders.md"


class WordConfig(GraderConfig):
    word: str = "x"


class Word(Grader[WordConfig]):
    type = "test_word"
    description = "d"

    def grade(self, sample):
        return self.scored_result(self.config.word in sample.output)


def test_config_comes_from_the_type_parameter_and_is_inherited():
    class Batch(BatchGrader[WordConfig]):
        type = "test_batch"
        description = "d"

        def grade_batch(self, samples):
            return [self.scored_result(True) for _ in samples]

    class Stricter(Word):
        pass

    assert Word.Config is WordConfig and Batch.Config is WordConfig and Stricter.Config is WordConfig
    assert not hasattr(BatchGrader, "Config")


def test_config_is_named_one_way_only():
    with pytest.raises(TypeError, match=r"class Old\(Grader\[WordConfig\]\), rather than setting Config"):
        class Old(Grader):
            type = "test_old"
            description = "d"
            Config = WordConfig
    with pytest.raises(TypeError, match="must be a GraderConfig subclass, not <class 'int'>"):
        class Odd(Grader[int]):
            pass


@pytest.fixture
def word():
    return Word(WordConfig(), name="w", weight=2.0)


def test_builders(word):
    passed, failed = word.scored_result(True), word.scored_result(False, 0.25, "short", {"n": 1})
    assert (passed.status, passed.passed, passed.score, passed.reason, passed.details) == (Status.PASSED, True, 1.0,
                                                                                          None, {})
    assert (failed.status, failed.passed, failed.score, failed.reason, failed.details) == (Status.FAILED, False, 0.25,
                                                                                          "short", {"n": 1})
    error = word.error_result(ErrorCode.TIMEOUT, "slow")
    assert (error.status, error.passed, error.score, error.error) == (Status.ERROR, False, None, ErrorCode.TIMEOUT)
    pending = word.pending_result("wait", {"who": "a reviewer"})
    assert (pending.status, pending.score, pending.error, pending.details) == (Status.PENDING, None, None,
                                                                               {"who": "a reviewer"})
    for r in (passed, failed, error, pending):
        assert (r.name, r.type, r.kind, r.weight) == ("w", "test_word", "code", 2.0)
        assert GraderResult.model_validate(r.model_dump()) == r  # the fast path builds valid results


@pytest.mark.parametrize("build", [
    lambda g, reason: g.scored_result(False, reason=reason),
    lambda g, reason: g.error_result(ErrorCode.INVALID_OUTPUT, reason),
    lambda g, reason: g.pending_result(reason),
], ids=["scored", "error", "pending"])
def test_every_builder_caps_the_reason(word, build):
    r = build(word, "y" * (MAX_REASON + 10))
    assert r.reason == "y" * MAX_REASON + f"… [{MAX_REASON + 10} characters in all]"
    assert r.details["reason_length"] == MAX_REASON + 10


def test_every_error_code_and_status_is_documented():
    tree = ast.parse(inspect.getsource(result))
    for enum in (ErrorCode, Status):
        body = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == enum.__name__).body
        documented = {a.targets[0].id for a, doc in zip(body, body[1:])
                      if isinstance(a, ast.Assign) and isinstance(doc, ast.Expr) and isinstance(doc.value, ast.Constant)}
        assert documented == {m.name for m in enum}


def test_every_result_field_is_described():
    assert [name for name, field in GraderResult.model_fields.items() if not field.description] == []


@pytest.fixture
def scratch_registry(monkeypatch):
    """Register the examples in a registry that forgets them after the test."""
    monkeypatch.setattr(registry, "_registry", dict(registry._registry))


def test_the_grader_docstring_example_runs(scratch_registry):
    example = textwrap.dedent(Grader.__doc__.split("::\n", 1)[1].split("\n\n    ``Config``")[0])
    namespace = {"GraderConfig": GraderConfig, "Grader": Grader, "Field": Field, "register": register,
                 "Sample": Sample, "GraderResult": GraderResult, "as_text": as_text}
    exec(compile(example, "<Grader docstring>", "exec"), namespace)
    grader = compile_spec({"type": "has_word", "config": {"word": "tea"}}).build()
    assert grader.grade(Sample(id="1", output="green tea")).passed
    assert grader.grade(Sample(id="2", output="coffee")).reason == "no 'tea'"


def test_the_guide_example_runs(scratch_registry):
    blocks = re.findall(r"```python\n(.*?)```", GUIDE.read_text(), re.S)
    exec(compile(blocks[0], "docs/concepts/custom-graders.md", "exec"), {"__name__": "word_count"})
    assert compile_spec({"type": "word_count"}).build().grade(Sample(id="1", output="a b")).passed
    too_long = compile_spec({"type": "word_count", "config": {"max_words": 1}}).build()
    r = too_long.grade(Sample(id="1", output="a b"))
    assert (r.status, r.reason, r.details) == ("failed", "2 words, more than 1", {"words": 2})
    with pytest.raises(Exception, match="min_words is greater than max_words"):
        compile_spec({"type": "word_count", "config": {"min_words": 3, "max_words": 1}})
    usage = blocks[1].strip().splitlines()[-1]
    assert eval(usage.split("  #")[0], {"assay": __import__("assay")}) is True
