"""The library face: assay.grade and assay.grade_batch refuse bad specs and samples with
SpecError (never TypeError or ValueError), and grade what they accept."""

import pytest

import assay
from assay import SpecError


@pytest.mark.parametrize("sample", [[1, 2], "text", None, 5, b"bytes"])
def test_a_sample_that_is_not_a_mapping_is_a_spec_error(sample):
    with pytest.raises(SpecError, match="a sample must be a mapping"):
        assay.grade({"type": "contains"}, sample)


@pytest.mark.parametrize("samples, message", [
    ("abc", "samples must be a list of mappings"),
    ({"output": "x"}, "samples must be a list of mappings"),
    ([{"output": "x"}, 3], r"samples\[1\]: a sample must be a mapping"),
])
def test_batches_name_the_bad_sample(samples, message):
    with pytest.raises(SpecError, match=message):
        assay.grade_batch({"type": "contains"}, samples)


@pytest.mark.parametrize("spec, message", [
    ({"type": "contains", "name": ""}, "name: String should have at least 1 character"),
    ({"type": "contains", "weight": float("inf")}, "weight: Input should be a finite number"),
    ({"type": "contains", "weight": True}, "weight: Input should be a valid number"),
    (["contains"], "a grader spec must be a mapping"),
])
def test_bad_specs_are_spec_errors(spec, message):
    with pytest.raises(SpecError, match=message):
        assay.grade(spec, {"output": "x"})


def test_a_huge_reason_is_capped_with_its_length():
    r = assay.grade({"type": "exact_match"}, {"output": "x" * 20_000, "expected": "y"})
    assert r.status.value == "failed" and len(r.reason) < 4200
    r = assay.grade({"type": "code", "config": {"code": "def evaluate(i, o, e, m):\n    return {'passed': False, "
                                                "'reason': 'r' * 50000}"}}, {"output": "x"})
    assert r.status.value == "failed", r.reason
    assert r.reason.endswith("[50000 characters in all]") and r.details["reason_length"] == 50000


@pytest.mark.parametrize("samples", [42, None, 3.5, {"output": "a"}, "ab", b"ab"])
def test_grade_batch_refuses_what_is_not_a_list_of_samples(samples):
    with pytest.raises(assay.SpecError, match="samples must be a list of mappings"):
        assay.grade_batch({"type": "exact_match"}, samples)


def test_grade_batch_reads_any_iterable_of_samples_once():
    rows = ({"output": o, "expected": "a"} for o in ("a", "b"))
    assert [r.passed for r in assay.grade_batch({"type": "exact_match"}, rows)] == [True, False]


@pytest.mark.parametrize("output, where", [(float("nan"), "$"), ({"a": [1, float("-inf")]}, "$/a/1")])
def test_json_schema_names_a_nan_output_instead_of_calling_it_null(output, where):
    r = assay.grade({"type": "json_schema", "config": {"schema": {"type": "number"}}}, {"output": output})
    assert r.status == "failed" and "null" not in r.reason
    assert r.reason == f"output is not valid JSON: {where} holds a number JSON cannot hold (NaN or an infinity)"
