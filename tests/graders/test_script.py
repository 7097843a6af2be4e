"""script grader: real Python, Node.js and shell scripts given the context on stdin."""

from __future__ import annotations

import shutil

import pytest

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
    spec = compile_spec({"type": "script", "config": {"script": name, "base_dir": str(tmp_path), **config}})
    return spec.build(default_resources()).grade(SAMPLE)


def test_python_script(tmp_path):
    r = grade(tmp_path, "g.py", PY_GRADER)
    assert (r.status.value, r.score, r.reason) == ("passed", 1.0, "checked")
    assert r.details["script_details"] == {"n": 1}


@pytest.mark.skipif(shutil.which("node") is None, reason="node not installed")
def test_node_script(tmp_path):
    body = ("let s='';process.stdin.on('data',d=>s+=d).on('end',()=>{const c=JSON.parse(s);"
            "console.log(JSON.stringify({score:0.4,message:c.task.id}))})")
    r = grade(tmp_path, "g.js", body)
    assert (r.status.value, r.score, r.reason) == ("failed", 0.4, "t1")  # no `passed`: score < 0.5


def test_shell_script(tmp_path):
    r = grade(tmp_path, "g.sh", 'grep -q deployed && echo \'{"passed": true}\'\n')
    assert (r.status.value, r.score) == ("passed", 1.0)


@pytest.mark.parametrize("body, code, text", [
    ("import sys; sys.exit(2)", "runtime_error", "exited with code 2"),
    ("print('nope')", "invalid_output", "not JSON"),
    ("print('{\"message\": \"m\"}')", "invalid_output", "neither"),
    ("print('{\"score\": 3}')", "invalid_output", "score"),
    ("import time; time.sleep(5)", "timeout", "timed out after 300ms"),
])
def test_script_errors(tmp_path, body, code, text):
    r = grade(tmp_path, "g.py", body, timeout="300ms")
    assert r.status.value == "error" and r.error.value == code
    assert text in r.reason


def test_missing_script(tmp_path):
    r = compile_spec({"type": "script", "config": {"script": "nope.py", "base_dir": str(tmp_path)}}).build(default_resources()).grade(SAMPLE)
    assert r.error.value == "invalid_config" and "not found" in r.reason


def test_default_timeout_and_strict_config():
    assert compile_spec({"type": "script", "config": {"script": "x.py"}}).config.timeout == 30
    with pytest.raises(SpecError, match="config.scriptt"):
        compile_spec({"type": "script", "config": {"scriptt": "x.py"}})
