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


# --- Schemas never reach the network or the file system -----------------------------------

@pytest.fixture
def listener():
    """A 127.0.0.1 HTTP server that serves a schema and counts the requests it gets."""
    import http.server
    import threading

    hits = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server's name)
            hits.append(self.path)
            body = b'{"type": "integer"}'
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", hits
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.parametrize("make, named", [
    (lambda base: {"$ref": f"{base}/x.json"}, "/x.json"),
    (lambda base: {"properties": {"a": {"$ref": f"{base}/deep.json#/a"}}}, "/deep.json"),
    (lambda base: {"$id": f"{base}/root.json", "$ref": "other.json"}, "/other.json"),
    (lambda base: {"$schema": f"{base}/meta.json"}, "/meta.json"),
    (lambda base: {"$schema": "http://json-schema.org/draft-07/schema#",
                   "definitions": {"a": {"$ref": f"{base}/d7.json"}}, "$ref": "#/definitions/a"}, "/d7.json"),
])
def test_remote_references_are_refused_without_a_request(listener, make, named):
    base, hits = listener
    with pytest.raises(SpecError, match=r"config\.schema: ") as err:
        compile_spec(spec(make(base)))
    assert named in str(err.value)
    assert "outside the schema" in str(err.value) or "not a bundled draft" in str(err.value)
    assert hits == []


def test_unknown_schema_uri_is_not_fetched(listener):
    base, hits = listener
    with pytest.raises(SpecError, match=r"config\.schema: \$schema '.*/meta' is not a bundled draft"):
        compile_spec(spec({"$schema": f"{base}/meta", "type": "integer"}))
    with pytest.raises(SpecError, match=r"is not a bundled draft"):  # jsonschema-rs would ask the network
        compile_spec(spec({"$schema": "http://json-schema.org/schema#"}))
    assert hits == []


def test_file_reference_does_not_read_the_file(tmp_path):
    secret = tmp_path / "secret.json"
    secret.write_text('{"const": "hunter2-SECRET"}')
    with pytest.raises(SpecError, match=r"config\.schema: reference 'file://.*secret\.json' is outside") as err:
        compile_spec(spec({"$ref": secret.as_uri()}))
    assert "hunter2" not in str(err.value)


def test_fifo_reference_returns_at_once(tmp_path):
    import os
    import threading

    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    outcome = []
    thread = threading.Thread(target=lambda: outcome.append(_spec_error({"$ref": fifo.as_uri()})), daemon=True)
    thread.start()
    thread.join(5)
    if thread.is_alive():  # blocked opening the FIFO: give it a writer so the thread can end
        fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
        os.write(fd, b"{}")
        os.close(fd)
        thread.join(5)
        pytest.fail("compiling a schema with a FIFO reference blocked")
    assert outcome and "outside the schema" in outcome[0]


def _spec_error(schema):
    try:
        compile_spec(spec(schema))
    except SpecError as exc:
        return str(exc)
    return "compiled"


@pytest.mark.parametrize("schema, good, bad", [
    ({"$ref": "#/$defs/n", "$defs": {"n": {"type": "integer"}}}, "1", '"1"'),
    ({"$ref": "#num", "$defs": {"n": {"$anchor": "num", "type": "integer"}}}, "1", '"1"'),
    ({"$id": "https://example.com/root.json", "$ref": "item.json",
      "$defs": {"i": {"$id": "item.json", "type": "integer"}}}, "1", '"1"'),
    ({"type": "array", "items": {"$ref": "#"}}, "[[], [[]]]", "[1]"),
    ({"$schema": "http://json-schema.org/draft-07/schema#", "definitions": {"n": {"type": "integer"}},
      "$ref": "#/definitions/n"}, "1", '"1"'),
    ({"$schema": "https://json-schema.org/draft/2019-09/schema", "$ref": "#/$defs/n",
      "$defs": {"n": {"type": "integer"}}}, "1", '"1"'),
    ({"$ref": "https://json-schema.org/draft/2020-12/schema"}, '{"type": "string"}', '{"type": 5}'),
])
def test_local_references_still_resolve(grade, schema, good, bad):
    assert grade(spec(schema), output=good).passed
    assert grade(spec(schema), output=bad).status == "failed"


def test_schema_compiled_once_per_spec(monkeypatch):
    import jsonschema_rs

    from assay.core.sample import Sample

    calls = []
    real = jsonschema_rs.validator_for

    def counting(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(jsonschema_rs, "validator_for", counting)
    grader = compile_spec(spec()).build()
    grader.grade_batch([Sample(id=str(i), output='{"city": "x", "population": 1}') for i in range(3)])
    assert len(calls) == 1


def test_reason_cuts_the_offending_value(grade):
    schema = {"type": "object", "properties": {"a": {"maxLength": 3}, "b": {"type": "string"}},
              "additionalProperties": False}
    output = {"a": "y" * 50_000, "b": {"k": list(range(20_000))}, "z" * 50_000: 1}
    r = grade(spec(schema), output=output)
    assert r.status == "failed"
    assert len(r.reason) < 2_000
    assert "is longer than 3 characters" in r.reason and 'is not of type "string"' in r.reason
    assert all(len(e["message"]) <= 400 and len(e["path"]) <= 400 for e in r.details["errors"])


@pytest.mark.parametrize("output", [{1: 2}, {"a": [{3, 4}]}, [object()]])
def test_output_that_is_not_json_is_an_error(grade, output):
    r = grade(spec({"type": "object", "additionalProperties": {"type": "array", "items": {"type": "string"}}}),
              output=output)
    assert (r.status, r.error) == ("error", "invalid_output")


def test_the_validator_is_prepared_state_on_the_config():
    import jsonschema_rs

    validator = compile_spec(spec()).config.validator
    assert isinstance(validator, jsonschema_rs.Validator)
    assert validator.is_valid({"city": "x", "population": 1}) and not validator.is_valid({"city": "x"})


VIOLATIONS = [  # (schema, output, the phrase of its one violation, its values)
    ({"required": ["a"]}, "{}", "required", {"property": '"a"'}),
    ({"type": "string"}, "3", "type", {"value": "3", "type": '"string"'}),
    ({"type": ["string", "null"]}, "3", "types", {"value": "3", "types": '"null", "string"'}),
    ({"minimum": 5}, "3", "minimum", {"value": "3", "limit": "5"}),
    ({"maximum": 5}, "7", "maximum", {"value": "7", "limit": "5"}),
    ({"exclusiveMinimum": 5}, "5", "exclusive_minimum", {"value": "5", "limit": "5"}),
    ({"exclusiveMaximum": 5}, "5", "exclusive_maximum", {"value": "5", "limit": "5"}),
    ({"multipleOf": 2}, "3", "multiple_of", {"value": "3", "multiple_of": "2"}),
    ({"minLength": 3}, '"a"', "min_length", {"value": '"a"', "limit": "3"}),
    ({"maxLength": 1}, '"abc"', "max_length_one", {"value": '"abc"', "limit": "1"}),
    ({"minItems": 2}, "[1]", "min_items", {"value": "[1]", "limit": "2"}),
    ({"maxItems": 1}, "[1,2]", "max_items_one", {"value": "[1,2]", "limit": "1"}),
    ({"minProperties": 2}, "{}", "min_properties", {"value": "{}", "limit": "2"}),
    ({"maxProperties": 0}, '{"a":1}', "max_properties", {"value": '{"a":1}', "limit": "0"}),
    ({"uniqueItems": True}, "[1,1]", "unique_items", {"value": "[1,1]"}),
    ({"enum": [1, "a"]}, "3", "enum", {"value": "3", "options": '[1,"a"]'}),
    ({"const": {"a": 1}}, "2", "constant", {"expected": '{"a":1}'}),
    ({"pattern": "^a"}, '"b"', "pattern", {"value": '"b"', "pattern": '"^a"'}),
    ({"properties": {"a": {}}, "additionalProperties": False}, '{"b":1}', "additional_properties", {"unexpected": '["b"]'}),
    ({"unevaluatedProperties": False}, '{"b":1}', "unevaluated_properties", {"unexpected": '["b"]'}),
    ({"prefixItems": [{}], "unevaluatedItems": False}, "[1,2]", "unevaluated_items", {"unexpected": '["2"]'}),
    ({"anyOf": [{"type": "string"}, {"type": "number"}]}, "null", "any_of", {"value": "null"}),
    ({"oneOf": [{"type": "string"}]}, "1", "one_of_none", {"value": "1"}),
    ({"oneOf": [{"type": "number"}, {"type": "integer"}]}, "1", "one_of_many", {"value": "1"}),
    ({"not": {"type": "string"}}, '"a"', "not", {"value": '"a"', "schema": '{"type":"string"}'}),
    ({"contains": {"type": "string"}}, "[1]", "contains", {"value": "[1]"}),
    (False, "1", "false_schema", {"value": "1"}),
    ({"propertyNames": {"maxLength": 1}}, '{"ab":1}', "max_length_one", {"value": '"ab"', "limit": "1"}),
    ({"dependentRequired": {"a": ["b"]}}, '{"a":1}', "required", {"property": '"b"'}),
]


@pytest.mark.parametrize(("schema", "output", "kind", "args"), VIOLATIONS, ids=[v[2] for v in VIOLATIONS])
def test_each_kind_of_violation_is_a_phrase_with_the_schemas_data(grade, schema, output, kind, args):
    """The reason reads as jsonschema-rs wrote it (results files, the CLI), and carries the
    kind's phrase with the schema's data and the offending value (the pages)."""
    r = grade(spec(schema), output=output)
    (error,) = r.details["errors"]
    assert r.reason == f"schema violation: {error['path']}: {error['message']}"  # the validator's words, as before
    assert r.reason_code == "json_schema.violation"
    at = r.reason_args["violations"]
    assert at["code"] == "json_schema.at" and at["args"]["path"] == error["path"]
    assert at["args"]["violation"] == {"code": f"json_schema.v.{kind}", "args": args}


def test_several_violations_are_a_list_and_a_kind_without_a_phrase_stays_as_written(grade):
    from assay.graders import _schema_words

    r = grade(spec(), output='{"population": -1}')
    items = r.reason_args["violations"]
    assert items["code"] == "list.items" and [i["args"]["violation"]["code"] for i in items["args"]["items"]] == \
        ["json_schema.v.required", "json_schema.v.minimum"]

    class Referencing:  # a kind this module has no phrase for
        def as_dict(self):
            return {}

    class Err:
        kind, instance = Referencing(), None

    assert type(_schema_words.said(Err(), "cannot resolve #/x")) is str


@pytest.mark.parametrize(("schema", "code", "inner"), [
    ({"properties": {"a": {"minimum": "x"}}}, "json_schema.invalid_at", "json_schema.v.type"),
    ({"$ref": "http://example.com/s.json"}, "json_schema.outside", None),
    ({"$schema": "http://example.com/draft", "type": "object"}, "json_schema.not_bundled", None),
])
def test_an_invalid_schema_is_said_by_a_phrase_at_its_field(schema, code, inner):
    """The API's 422 (and the pages) name config.schema and say what is wrong in their language;
    the text is what it was."""
    with pytest.raises(SpecError) as caught:
        compile_spec(spec(schema))
    said = caught.value.message
    assert said.code == "problem.at" and said.args["path"] == "config.schema"
    assert said.args["problem"]["code"] == code
    if inner:
        assert said.args["problem"]["args"]["problem"]["code"] == inner
    assert str(caught.value).startswith("config.schema: ")
