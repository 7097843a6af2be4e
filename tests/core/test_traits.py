"""Grader traits: every built-in declares them, kernels import, and what consumers derive
from them (API types, inline grading, reviews, forms, batch sizes) follows the declarations."""

from __future__ import annotations

import inspect

import pytest

from assay.core import registry
from assay.core.builtins import BUILTIN
from assay.core.grader import BatchGrader, Grader, Traits
from assay.core.spec import compile_spec
from assay.runner.columnar._support import has_kernel, kernel_path, load_kernel
from assay.runner.reviews import reviewable
from assay.runner.sizing import CODE_BATCH_ROWS, CODE_CHUNK, IO_BATCH_ROWS, PURE_BATCH_ROWS, PURE_CHUNK, batch_sizes
from assay.store.translate import api_types

CODE = {"language": "python", "code": "def evaluate(input, output, expected, metadata):\n    return True\n"}


@pytest.mark.parametrize("grader_type", sorted(BUILTIN))
def test_every_builtin_declares_its_traits(grader_type):
    cls = registry.get(grader_type)
    owners = [k for k in cls.__mro__ if "traits" in k.__dict__ and k not in (Grader, BatchGrader)]
    assert owners, f"{cls.__qualname__} declares no traits (set `traits = Traits(...)` on the class)"
    assert isinstance(cls.traits, Traits)
    if cls.traits.batches_io:
        assert cls.traits.io_bound, "batching its own I/O only means something for a grader that waits"


@pytest.mark.parametrize("grader_type", sorted(t for t in BUILTIN if registry.get(t).traits.kernel))
def test_every_kernel_path_imports(grader_type):
    pytest.importorskip("pyarrow")
    path = registry.get(grader_type).traits.kernel
    kernel = load_kernel(path)
    assert callable(kernel)
    assert "workers" in inspect.signature(kernel).parameters, f"{path} must take workers=..."


def test_a_subclass_does_not_inherit_a_kernel():
    from assay.graders.exact_match import ExactMatch

    class Stricter(ExactMatch):
        type = "stricter_exact"

    assert ExactMatch.traits.kernel and Stricter.traits.kernel is None
    assert Stricter.traits.inline == ExactMatch.traits.inline


def test_api_types_come_from_the_traits():
    allowed = api_types()
    assert {"exact_match", "contains", "regex", "json_schema", "similarity", "code", "composite", "llm"} <= allowed
    assert not allowed & {"program", "script", "human", "tool_calls", "waza_file", "vally_run_command"}
    # the peers' graders come from their suites, not the API: a composite subclass (a waza
    # checkpoint) does not become API-safe, or grow a form in the pages, by inheritance
    assert not {t for t in allowed if t.startswith(("waza_", "vally_"))}
    assert not registry.get("waza_checkpoint").traits.form
    assert {"program", "script"} <= api_types(allow_programs=True)
    for t in allowed:
        assert registry.get(t).traits.api_safe


def test_reviewable_types_are_the_human_ones():
    assert reviewable("human") and reviewable("human_calibration")
    assert not reviewable("llm") and not reviewable("no_such_grader")


def test_a_regex_needing_backtracking_is_neither_inline_nor_a_kernel():
    plain = compile_spec({"type": "regex", "config": {"pattern": "^a+$"}})
    backref = compile_spec({"type": "regex", "config": {"pattern": "(a)\\1"}})
    assert plain.traits.inline and plain.traits.kernel
    assert not backref.traits.inline and backref.traits.kernel is None
    assert kernel_path(backref.grader_cls, backref.config) is None and not has_kernel(backref)
    assert backref.build().traits == backref.traits


def test_a_composite_derives_its_traits_from_its_children():
    presets = compile_spec({"type": "composite", "config": {"graders": [{"type": "exact_match"},
                                                                         {"type": "contains"}]}})
    assert presets.traits.inline and presets.traits.api_safe and not presets.traits.io_bound
    assert presets.traits.kernel is None and presets.kind == "code"
    mixed = compile_spec({"type": "composite", "config": {"graders": [
        {"type": "exact_match"}, {"type": "code", "config": CODE}]}})
    t = mixed.traits
    assert t.io_bound and t.batches_io and not t.inline and t.api_safe
    judged = compile_spec({"type": "composite", "config": {"graders": [
        {"type": "llm", "config": {"rubric": "r", "model": "m"}}, {"type": "human"}]}})
    assert judged.traits.judge and judged.traits.reviewable and not judged.traits.api_safe
    assert judged.kind == "human" and judged.build().kind == "human"


def test_one_rule_sizes_every_engine():
    code = compile_spec({"type": "code", "config": CODE})
    composite_of_code = compile_spec({"type": "composite", "config": {"graders": [{"type": "code", "config": CODE}]}})
    program = compile_spec({"type": "program", "config": {"program": "true"}})
    judge = compile_spec({"type": "llm", "config": {"rubric": "r", "model": "m"}})
    pure = compile_spec({"type": "exact_match"})
    assert batch_sizes([pure]) == batch_sizes([pure, pure])
    assert (batch_sizes([pure]).first, batch_sizes([pure]).largest, batch_sizes([pure]).ray_rows) == \
        (PURE_CHUNK, None, PURE_BATCH_ROWS)
    for spec in (code, composite_of_code):  # a composite of code graders sizes as code does
        sizes = batch_sizes([pure, spec], concurrency=8)
        assert (sizes.first, sizes.largest, sizes.ray_rows) == (32, CODE_CHUNK, CODE_BATCH_ROWS)
    assert batch_sizes([program]).largest is None and batch_sizes([program]).ray_rows == IO_BATCH_ROWS
    assert batch_sizes([judge]).ray_rows == IO_BATCH_ROWS and batch_sizes([judge]).first == PURE_CHUNK
