"""script grader: real Python, Node.js and shell scripts given the context on stdin."""

from __future__ import annotations

import orjson
import pytest

from assay.core.context import SpecContext
from assay.core.errors import SpecError
from assay.core.sample import Sample
from assay.core.spec import compile_spec
from assay.runner.resources import default_resources

SAMPLE = Sample(id="t1", input="deploy", output="success: deployed", expected={"k": 1},
                transcript=[{"type": "tool_call", "name": "bash", "arguments": {"command": "azd up"}},
                            {"type": "error", "message": "warn"}], duration_ms=12)

PY_GRADER = """
import json, sys
ctx = json.load(sys.stdin)
ok = "success" in ctx["output"] and ctx["tool_calls"][0]["tool"] == "bash" and ctx["transcript"][0]["role"] == "tool"
print(json.dumps({"score": 1.0 if ok else 0.0, "passed": ok, "message": "checked", "details": {"n": len(ctx["errors"])}}))
"""


def grade(tmp_path, name, body, **config):
    (tmp_path / name).write_text(body)
    spec = compile_spec({"type": "script", "config": {"script": name, **config}}, context=SpecContext(base_dir=tmp_path))
    return spec.build(default_resources()).grade(SAMPLE)


def test_python_script(tmp_path):
    r = grade(tmp_path, "g.py", PY_GRADER)
    assert (r.status.value, r.score, r.reason) == ("passed", 1.0, "checked")
    assert r.details["script_details"] == {"n": 1}


@pytest.mark.node
def test_node_script(tmp_path):
    body = ("let s='';process.stdin.on('data',d=>s+=d).on('end',()=>{const c=JSON.parse(s);"
            "console.log(JSON.stringify({score:0.4,message:c.task.id}))})")
    r = grade(tmp_path, "g.js", body)
    assert (r.status.value, r.score, r.reason) == ("failed", 0.4, "t1")  # no `passed`: score < 0.5


def test_shell_script(tmp_path):
    r = grade(tmp_path, "g.sh", 'grep -q deployed && echo \'{"passed": true}\'\n')
    assert (r.status.value, r.score) == ("passed", 1.0)


@pytest.mark.parametrize("body, code, text, timeout", [
    ("import sys; sys.exit(2)", "runtime_error", "exited with code 2", "30s"),
    ("print('nope')", "parse_failure", "not JSON", "30s"),
    ("pass", "parse_failure", "not JSON", "30s"),
    ("print('{\"message\": \"m\"}')", "invalid_output", "neither", "30s"),
    ("print('{\"score\": 3}')", "invalid_output", "score", "30s"),
    # Only the sleeper is meant to time out: the others finish, however long an interpreter takes
    # to start on a loaded machine (300 ms was not always enough for them).
    ("import time; time.sleep(5)", "timeout", "timed out after 300ms", "300ms"),
])
def test_script_errors(tmp_path, body, code, text, timeout):
    r = grade(tmp_path, "g.py", body, timeout=timeout)
    assert r.status.value == "error" and r.error.value == code
    assert text in r.reason


def test_missing_script(tmp_path):
    spec = compile_spec({"type": "script", "config": {"script": "nope.py"}}, context=SpecContext(base_dir=tmp_path))
    r = spec.build(default_resources()).grade(SAMPLE)
    assert r.error.value == "invalid_config" and "not found" in r.reason


def test_default_timeout_and_strict_config():
    assert compile_spec({"type": "script", "config": {"script": "x.py"}}).config.timeout == 30
    with pytest.raises(SpecError, match="config.scriptt"):
        compile_spec({"type": "script", "config": {"scriptt": "x.py"}})


@pytest.mark.parametrize("config, field, text", [
    ({"env": {"A=B": "x"}}, "config.env", "not an environment variable name"),
    ({"env": {"FOO": "a\0b"}}, "config.env.FOO", "NUL"),
    ({"script": "g\0.py"}, "config.script", "NUL"),
    ({"args": ["\ud800"]}, "config.args[0]", "lone surrogate"),
    ({"interpreter": ""}, "config.interpreter", "must not be empty"),
    ({"interpreter": "py\0"}, "config.interpreter", "NUL"),
    ({"base_dir": "/tmp"}, "config.base_dir", "unknown field"),
    ({"threshold": float("nan")}, "config.threshold", "finite"),
    ({"timeout": float("inf")}, "config.timeout", "at most 3600s"),
    ({"timeout": 10**400}, "config.timeout", "at most 3600s"),
    ({"timeout": "61m"}, "config.timeout", "at most 3600s"),
])
def test_hostile_config_is_a_spec_error(config, field, text):
    with pytest.raises(SpecError) as exc:
        compile_spec({"type": "script", "config": {"script": "g.py", **config}})
    assert str(exc.value).startswith(f"{field}: ") and text in str(exc.value)


def printer(data: bytes) -> str:
    return f"import sys; sys.stdout.buffer.write({data!r})"


@pytest.mark.parametrize("data, code, text", [
    (b"\xff{}", "parse_failure", "not JSON"),
    (b'{"a": ' + b"9" * 5000 + b"}", "parse_failure", "not JSON"),  # JSON Python's parser refuses
    (b"[" * 100_000 + b"]" * 100_000, "invalid_output", "nested more than 100 levels deep"),
    (b'{"passed": true, "details": {"x": ' + b"[" * 150 + b"]" * 150 + b"}}", "invalid_output",
     "nested more than 100 levels deep"),
    (b'{"score": NaN}', "invalid_output", "score"),
    (b'{"score": ' + b"9" * 40 + b"}", "invalid_output", "score"),
    (b'{"passed": true, "score": "high"}', "invalid_output", "score"),
    (b"null", "invalid_output", "<root>"),
    (b"x" * (2 << 20), "invalid_output", "longer than the 1048576-byte cap"),
])
def test_hostile_output_is_an_error(tmp_path, data, code, text):
    """Not JSON at all is a parse_failure; JSON too deep, too long or of the wrong shape is invalid_output."""
    r = grade(tmp_path, "g.py", printer(data))
    assert r.status.value == "error" and r.error.value == code, r.reason
    assert text in r.reason
    orjson.dumps(r.model_dump())


def test_odd_values_in_details_are_normalised(tmp_path):
    data = b'{"passed": true, "message": "ok \\udc00", "details": {"nan": NaN, "big": ' + b"9" * 30 + b', "s": "\\ud800"}}'
    r = grade(tmp_path, "g.py", printer(data))
    assert (r.status.value, r.reason) == ("passed", "ok \ufffd")
    assert r.details["script_details"] == {"nan": "NaN", "big": "9" * 30, "s": "\ufffd"}
    orjson.dumps(r.model_dump())


def test_odd_sample_values_reach_the_script_as_json(tmp_path):
    body = ("import json, sys; c = json.load(sys.stdin);"
            "ok = c['output'] == '\\ufffd' and c['metadata'] == {'x': 'NaN'};"
            "print(json.dumps({'passed': ok}))")
    (tmp_path / "g.py").write_text(body)
    spec = compile_spec({"type": "script", "config": {"script": "g.py"}}, context=SpecContext(base_dir=tmp_path))
    r = spec.build(default_resources()).grade(Sample(id="s", output="\ud800", metadata={"x": float("nan")}))
    assert r.status.value == "passed", r.details
    deep: list = []
    for _ in range(150):
        deep = [deep]
    r = spec.build(default_resources()).grade(Sample(id="s", output=deep))
    assert r.error.value == "invalid_output" and "nested more than 100 levels deep" in r.reason
