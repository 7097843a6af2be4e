"""assay.grade_batch on plain dicts builds the Samples it can directly (``trusted_samples``) and
validates the rest: the two ways give the same Samples, the same results and the same errors."""

from __future__ import annotations

import random
from collections import OrderedDict
from types import MappingProxyType

import pytest

import assay
from assay import SpecError
from assay.core.result import copier
from assay.core.sample import Sample, trusted_samples
from assay.graders._text import describe
from assay.graders.exact_match import DIFFERS_AT, KINDS_DIFFER, difference_reason
from assay.library import _batch, _validated


class Text(str):
    """A str subclass: validation turns it into a plain str, so the direct path leaves it alone."""


DIRECT = [  # rows validation keeps as they are
    {}, {"output": "a", "expected": "a"}, {"id": "x", "input": {"q": [1, 2]}, "output": 42, "expected": 42.0},
    {"id": 7, "output": None}, {"id": -3, "expected": [True, None]}, {"output": "b", "id": "first"},
    {"metadata": {"k": [1], "n": None}, "outcome": {"ok": True}, "duration_ms": 12, "workspace": "/tmp/w",
     "transcript": []},
    {"duration_ms": 0.5, "outcome": None, "workspace": None, "output": Text("kept as it is")},
    {"duration_ms": -0.0, "metadata": {}}, {"input": Text("any"), "output": {"deep": [{"er": 1}]}},
]
VALIDATED = [  # rows validation converts (or whose events it parses): the direct path declines them
    {"transcript": [{"type": "assistant_message", "content": "hi"}], "output": "hi"},
    {"id": Text("x")}, {"workspace": Text("w")}, {"duration_ms": True}, {"duration_ms": "1.5"},
    {"duration_ms": 2**60}, {"id": 2**70}, {"metadata": OrderedDict(a=1)}, {"outcome": OrderedDict()},
    OrderedDict(output="a", expected="a"), MappingProxyType({"output": "a"}),
    {"transcript": [{"role": "assistant", "content": "hello"}]},
]
OTHER_VALUES = [None, "", "a", "北京", 42, 42.0, -0.0, True, False, [1, "a"], {"b": 1, "a": [None]}, Text("a")]


def generated(n: int = 3_000, seed: int = 5) -> list:
    """Rows of every kind above with random values, and a few Samples."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        roll = rng.random()
        if roll < 0.05:
            rows.append(Sample(id=f"s{i}", output=rng.choice(OTHER_VALUES)))
            continue
        base = rng.choice(VALIDATED if roll < 0.2 else DIRECT)
        row = type(base)(base) if not isinstance(base, MappingProxyType) else base
        if isinstance(row, dict) and rng.random() < 0.7:
            row["output"] = rng.choice(OTHER_VALUES)
            row["expected"] = row["output"] if rng.random() < 0.4 else rng.choice(OTHER_VALUES)
        rows.append(row)
    return rows


def test_the_direct_path_takes_exactly_the_rows_validation_keeps():
    direct = trusted_samples(DIRECT)
    assert all(type(s) is Sample for s in direct)
    assert trusted_samples(VALIDATED) == [None] * len(VALIDATED)
    given = Sample(id="s")
    assert trusted_samples([given, 3, "text"]) == [given, None, None]
    assert trusted_samples([given])[0] is given


def assert_same_samples(got: list[Sample], want: list[Sample]) -> None:
    assert len(got) == len(want)
    for i, (g, w) in enumerate(zip(got, want)):
        assert type(g) is type(w), i
        assert list(g.__dict__.items()) == list(w.__dict__.items()), i  # same values, same field order
        assert g.model_fields_set == w.model_fields_set, i
        assert (g.__pydantic_extra__, g.__pydantic_private__) == (w.__pydantic_extra__, w.__pydantic_private__)
        assert g.model_dump_json() == w.model_dump_json(), i
        assert repr(g) == repr(w), i


def test_direct_and_validated_samples_are_the_same():
    rows = generated()
    got = _batch(rows)
    assert_same_samples(got, _validated(list(enumerate(rows))))
    assert sum(s is not None for s in trusted_samples(rows)) > len(rows) * 0.7  # most rows went directly


def test_a_direct_sample_owns_its_containers_as_a_validated_one_does():
    metadata = {"k": 1}
    a, b = _batch([{"metadata": metadata}, {}])
    assert a.metadata == metadata and a.metadata is not metadata
    assert a.transcript is not b.transcript and a.metadata is not b.metadata
    with pytest.raises(Exception, match="frozen"):
        a.output = "changed"  # type: ignore[misc]
    assert a.model_fields_set == {"id", "metadata"} and b.model_fields_set == {"id"}
    assert a.tool_calls == [] and a.errors == [] and "tool_calls" in a.__dict__  # cached as on any Sample


SPECS = [{"type": "exact_match"}, {"type": "exact_match", "config": {"trim": True, "ignore_case": True}},
         {"type": "exact_match", "name": "em", "weight": 2}, {"type": "contains"}]


@pytest.mark.parametrize("spec", SPECS, ids=str)
def test_results_are_the_same_by_either_path(spec):
    rows = generated(1_500, seed=9)
    got = assay.grade_batch(spec, rows)
    want = assay.grade_batch(spec, _validated(list(enumerate(rows))))  # Samples go straight to the grader
    assert len(got) == len(want) == len(rows)
    for g, w in zip(got, want):
        assert type(g) is type(w)
        assert {**g.__dict__, "latency_ms": 0} == {**w.__dict__, "latency_ms": 0}
        assert list(g.__dict__) == list(w.__dict__) and g.model_fields_set == w.model_fields_set
    assert {r.status.value for r in got} >= {"passed", "failed"}


def test_exact_match_results_are_what_the_builders_make():
    rs = assay.grade_batch({"type": "exact_match", "name": "em", "weight": 2},
                           [{"output": "a", "expected": "a"}, {"output": "a", "expected": "a"},
                            {"output": "abc", "expected": "abd"}, {"output": 1, "expected": True}])
    grader = assay.library._grader({"type": "exact_match", "name": "em", "weight": 2}, None)
    want = [grader.scored_result(True), grader.scored_result(True),
            grader.scored_result(False, reason=DIFFERS_AT(index=2, got="'c'", expected="'d'")),
            grader.scored_result(False, reason=KINDS_DIFFER(output=describe(1), expected=describe(True)))]
    assert [r.reason for r in rs[2:]] == ["output differs from expected at character 2: got 'c', expected 'd'",
                                          "output is a number (1), expected is a boolean (true)"]
    assert rs[3].reason_args == {"output": {"code": "json.shown", "args": {"kind": {"code": "json.number", "args": {}},
                                                                           "shown": "1"}},
                                 "expected": {"code": "json.shown", "args": {"kind": {"code": "json.boolean",
                                                                                      "args": {}}, "shown": "true"}}}
    for r, w in zip(rs, want):
        assert {**r.__dict__, "latency_ms": 0} == {**w.__dict__, "latency_ms": 0}
        assert r.model_fields_set == w.model_fields_set
    rs[0].details["mine"] = 1  # every result owns its details
    assert rs[1].details == {}


def test_a_copied_result_equals_its_template_and_owns_its_details():
    grader = assay.library._grader({"type": "exact_match"}, None)
    template = grader.scored_result(False, details={"k": 1})
    copy = copier(template)
    a, b = copy(), copy("why")
    assert a.__dict__ == template.__dict__ and a is not template and a.details is not template.details
    assert b.__dict__ == grader.scored_result(False, reason="why", details={"k": 1}).__dict__
    assert a.model_dump() == template.model_dump() and repr(a) == repr(template)


@pytest.mark.parametrize("a, b", [("abc", "abd"), ("", "x"), ("北京是中国的首都", "北京是日本的首都"),
                                  ("x" * 500 + "y", "x" * 500 + "z"), ("same prefix", "same")])
def test_the_text_shortcut_of_a_failure_reason_says_what_the_general_path_says(a, b):
    assert difference_reason(a, b) == difference_reason(Text(a), Text(b))  # a str subclass takes the general path


BAD = [
    ([{"output": "a"}, {"output": "b", "metadata": "x"}], "samples.[1].metadata: Input should be a valid dictionary"),
    ([{"outptu": "a"}], "samples.[0].outptu: unknown field (not allowed here)"),
    ([{"id": ""}, {"output": 1, "metadata": 3}],
     "samples.[0].id: String should have at least 1 character; samples.[1].metadata: Input should be a valid "
     "dictionary"),
    ([{"output": "x"}] * 700 + [{"id": None}], "samples.[700].id: Input should be a valid string"),
    ([{"duration_ms": -1}], "samples.[0].duration_ms: Input should be greater than or equal to 0"),
    ([{"duration_ms": float("nan")}], "samples.[0].duration_ms: Input should be a finite number"),
    ([{"duration_ms": float("inf")}], "samples.[0].duration_ms: Input should be a finite number"),
    ([{"metadata": {1: 2}}], "samples.[0].metadata[1].[key]: Input should be a valid string"),
    ([{"id": True}], "samples.[0].id: Input should be a valid string"),
    ([{"workspace": 3}, {"outcome": []}], "samples.[0].workspace: Input should be a valid string; "
                                          "samples.[1].outcome: Input should be a valid dictionary"),
    ([Sample(id="s"), {"output": 2, "duration_ms": "x"}, 3], r"samples[2]: a sample must be a mapping"),
    ([{"transcript": [{"type": "tool_call", "name": 3}]}], "samples.[0].transcript"),
]


@pytest.mark.parametrize("rows, message", BAD, ids=range(len(BAD)))
def test_bad_samples_get_the_errors_validation_gives(rows, message):
    with pytest.raises(SpecError) as got:
        assay.grade_batch({"type": "exact_match"}, rows)
    with pytest.raises(SpecError) as want:
        _validated(list(enumerate(rows)))  # the validating path, on every row
    assert str(got.value) == str(want.value)
    assert message in str(got.value)
