import pytest

from assay.core.errors import SpecError
from assay.core.spec import compile_spec

SCHEMA = {"type": "object", "required": ["city", "population"],
          "properties": {"city": {"type": "string"}, "population": {"type": "integer", "minimum": 0},
                         "tags": {"type": "array", "items": {"type": "string"}}}}


def spec(schema=SCHEMA):
    return {"type": "json_schema", "config": {"schema": schema}}


def test_valid(grade):
    assert grade(spec(), output='{"city": "上海", "population": 24870895}').passed


def test_not_json_fails_with_reason(grade):
    r = grade(spec(), output="The city is Shanghai")
    assert r.status == "failed" and r.reason.startswith("output is not valid JSON")


def test_empty_output_is_not_json(grade):
    assert grade(spec(), output="").status == "failed"


def test_violation_names_path_and_message(grade):
    r = grade(spec(), output='{"city": "上海", "population": 1, "tags": ["a", 2]}')
    assert r.status == "failed"
    assert r.details["errors"][0]["path"] == "$.tags[1]"
    assert '2 is not of type "string"' in r.reason


def test_several_violations_reported(grade):
    r = grade(spec(), output='{"population": -1}')
    paths = {e["path"] for e in r.details["errors"]}
    assert paths == {"$", "$.population"}


def test_draft_2020_12_by_default(grade):
    schema = {"type": "array", "prefixItems": [{"type": "integer"}], "items": False}
    assert grade(spec(schema), output="[1]").passed
    assert not grade(spec(schema), output="[1, 2]").passed


def test_schema_keyword_honoured(grade):
    # draft-04: exclusiveMaximum is a boolean modifier of maximum
    schema = {"$schema": "http://json-schema.org/draft-04/schema#", "maximum": 5, "exclusiveMaximum": True}
    assert not grade(spec(schema), output="5").passed
    assert grade(spec(schema), output="4").passed


def test_already_parsed_output_is_validated(grade):
    assert grade(spec(), output={"city": "x", "population": 3}).passed


@pytest.mark.parametrize("schema", [{"type": "foo"}, {"minimum": "zero"}, {"required": "city"}])
def test_invalid_schema_is_invalid_config(schema):
    with pytest.raises(SpecError, match=r"config\.schema: invalid JSON Schema"):
        compile_spec(spec(schema))


def test_schema_required():
    with pytest.raises(SpecError, match=r"config\.schema: Field required"):
        compile_spec({"type": "json_schema", "config": {}})
