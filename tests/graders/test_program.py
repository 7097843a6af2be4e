"""program grader: real Python, Node.js and shell programs; every Vally evidence case."""

from __future__ import annotations

import json
import os
import sys
import time

import orjson
import pytest

from assay.core.context import SpecContext
from assay.core.errors import SpecError
from assay.core.interfaces import Resources
from assay.core.sample import Sample
from assay.core.spec import compile_spec
from assay.runner.resources import default_resources
from assay.sandbox.process import LocalProcessRunner

PY = sys.executable


def grade(config, sample=None, tmp_path=None):
    workspace = str(tmp_path) if tmp_path is not None else None
    sample = sample or Sample(id="s1", input="do it", output="done", workspace=workspace)
    return compile_spec({"type": "program", "config": config}).build(default_resources()).grade(sample)


def py(code: str) -> dict:
    return {"program": PY, "args": ["-c", code]}


@pytest.mark.parametrize("config, status, score, evidence", [
    (py("pass"), "passed", 1.0, "Grader exited successfully"),
    (py("import sys; sys.exit(3)"), "failed", 0.0, "Grader exited with exit code 3"),
    ({"program": "exit 4", "shell": True}, "failed", 0.0, "Grader exited with exit code 4"),
    ({"program": "kill -9 $$", "shell": True}, "failed", 0.0, "Grader was killed by signal SIGKILL"),
    (py("print('not json')"), "failed", 0.0, "Grader returned unparseable JSON output on stdout: JSONDecodeError"),
    (py("print('{\"passed\": true}')"), "failed", 0.0, "Grader output did not match schema"),
    (py("import json; print(json.dumps(dict(name='n', passed=True, score=0.85, evidence='14 of 16', kind='code')))"),
     "passed", 0.85, "14 of 16"),
    (py("import json; print(json.dumps(dict(name='n', passed=False, score=0.2, evidence='bad', kind='llm',"
        " metadata={'k': 1})))"), "failed", 0.2, "bad"),
])
def test_evidence_cases(config, status, score, evidence, tmp_path):
    r = grade(config, tmp_path=tmp_path)
    assert r.status.value == status
    assert r.score == score
    assert r.reason.startswith(evidence)


@pytest.mark.parametrize("doc, field", [
    ({"name": "n", "passed": True, "score": 1.5, "evidence": "e", "kind": "code"}, "score"),
    ({"name": "n", "passed": "yes", "score": 1, "evidence": "e", "kind": "code"}, "passed"),
    ({"name": "n", "passed": True, "score": 1, "kind": "code"}, "evidence"),
    ({"name": "n", "passed": True, "score": 1, "evidence": "e", "kind": "code", "extra": 1}, "extra"),
    ({"name": "n", "passed": True, "score": 1, "evidence": "e", "kind": "robot"}, "kind"),
    ([1, 2], "<root>"),
])
def test_schema_is_strict(doc, field, tmp_path):
    r = grade(py(f"print({json.dumps(json.dumps(doc))})"), tmp_path=tmp_path)
    assert r.status.value == "failed" and r.score == 0.0
    assert r.reason.startswith("Grader output did not match schema")
    assert any(e.startswith(field) for e in r.details["schema_errors"])


def test_metadata_and_reported_name_kept(tmp_path):
    code = "import json; print(json.dumps(dict(name='x', passed=True, score=1, evidence='ok', kind='code', metadata={'a': 1})))"
    r = grade(py(code), tmp_path=tmp_path)
    assert r.details["metadata"] == {"a": 1} and r.details["reported_name"] == "x"


def test_failed_to_start_is_enoent(tmp_path):
    r = grade({"program": "no-such-program-assay-xyz"}, tmp_path=tmp_path)
    assert r.status.value == "error" and r.error.value == "unavailable"
    assert r.reason.startswith("Failed to start grader program: ENOENT (spawn)")


@pytest.mark.node
def test_node_program_json_mode(tmp_path):
    (tmp_path / "score.js").write_text(
        "const fs = require('fs');"
        "const input = JSON.parse(fs.readFileSync(process.env.EVALUATE_GRADER_INPUT, 'utf8'));"
        "console.log(JSON.stringify({name: 'js', passed: input.output === 'done', score: 0.5,"
        " evidence: 'from node ' + input.stimulus.prompt, kind: 'code'}));")
    r = grade({"program": "node", "args": ["score.js"]}, tmp_path=tmp_path)
    assert (r.status.value, r.score, r.reason) == ("passed", 0.5, "from node do it")


def test_shell_program_sees_workspace_and_input(tmp_path):
    (tmp_path / "check.sh").write_text('test "$EVALUATE_WORKSPACE" = "$(pwd)" && grep -q \'"output": "done"\' "$EVALUATE_GRADER_INPUT"\n')
    r = grade({"program": "bash", "args": ["check.sh"]}, tmp_path=tmp_path)
    assert r.status.value == "passed", r.details


def test_grader_input_contents_and_cleanup(tmp_path):
    sub = tmp_path / "src" / "app"
    sub.mkdir(parents=True)
    code = ("import json, os, shutil; p = os.environ['EVALUATE_GRADER_INPUT'];"
            "shutil.copy(p, os.path.join(os.environ['EVALUATE_WORKSPACE'], 'seen.json'));"
            "open(os.path.join(os.environ['EVALUATE_WORKSPACE'], 'meta.txt'), 'w').write(p + '\\n' + os.getcwd())")
    sample = Sample(id="s9", input="prompt", output="out", expected="exp", metadata={"m": 1},
                    transcript=[{"type": "tool_call", "name": "bash", "call_id": "1", "arguments": {"command": "ls"}}],
                    workspace=str(tmp_path))
    r = grade({**py(code), "sub_path": "src/app", "env": {"FOO": "bar"}}, sample)
    assert r.status.value == "passed"
    doc = json.loads((tmp_path / "seen.json").read_text())
    assert doc["output"] == "out" and doc["expected"] == "exp" and doc["metadata"] == {"m": 1}
    assert doc["stimulus"]["prompt"] == "prompt" and doc["config"]["sub_path"] == "src/app"
    assert doc["trajectory"]["events"][0]["data"] == {"toolName": "bash", "toolCallId": "1", "arguments": {"command": "ls"}}
    path, cwd = (tmp_path / "meta.txt").read_text().splitlines()
    assert not os.path.exists(path), "grader input file must be removed afterwards"
    assert os.path.realpath(cwd) == os.path.realpath(sub)
    assert doc["workspace"] == os.path.realpath(tmp_path)


@pytest.mark.parametrize("name", ["EVALUATE_WORKSPACE", "evaluate_grader_input", "Evaluate_Workspace",
                                  "EVALUATE_GRADER_INPUT"])
def test_reserved_env_names_rejected(name):
    with pytest.raises(SpecError, match="cannot be given in env") as exc:
        compile_spec({"type": "program", "config": {"program": "true", "env": {name: "x"}}})
    assert "config.env" in str(exc.value)


@pytest.mark.parametrize("sub_path", ["..", "../x", "a/../../b", "/etc"])
def test_sub_path_escape_rejected_at_config(sub_path):
    with pytest.raises(SpecError, match="sub_path"):
        compile_spec({"type": "program", "config": {"program": "true", "sub_path": sub_path}})


def test_symlink_escape_is_invalid_config_at_grade_time(tmp_path):
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    ws.mkdir()
    outside.mkdir()
    (ws / "link").symlink_to(outside)
    r = grade({"program": "true", "sub_path": "link"}, Sample(id="s", workspace=str(ws)))
    assert r.status.value == "error" and r.error.value == "invalid_config"
    assert "escapes the workspace" in r.reason


def test_symlink_escape_with_static_workspace_rejected_at_config(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "up").symlink_to(tmp_path)
    with pytest.raises(SpecError, match="escapes"):
        compile_spec({"type": "program", "config": {"program": "true", "sub_path": "up", "workspace": str(ws)}})


@pytest.mark.parametrize("raw, seconds", [("60s", 60), ("2m", 120), ("500ms", 0.5), (5, 5), ("1m30s", 90)])
def test_durations(raw, seconds):
    assert compile_spec({"type": "program", "config": {"program": "true", "timeout": raw}}).config.timeout == seconds


@pytest.mark.parametrize("raw", ["abc", "10", "-1s", 0, "5 minutes", True])
def test_bad_durations(raw):
    with pytest.raises(SpecError, match="config.timeout"):
        compile_spec({"type": "program", "config": {"program": "true", "timeout": raw}})


def test_default_timeout_is_60s():
    assert compile_spec({"type": "program", "config": {"program": "true"}}).config.timeout == 60


def test_timeout_kills_the_whole_process_group(tmp_path):
    pidfile = tmp_path / "child.pid"
    start = time.monotonic()
    # 2 s for the shell to start and write its child's pid on a loaded machine (300 ms was not
    # always enough: the group was killed before the pid file existed); the 30 s child still
    # makes it time out, and the grade must not wait for that child.
    r = grade({"program": f"sleep 30 & echo $! > {pidfile}; wait", "shell": True, "timeout": "2s"},
              tmp_path=tmp_path)
    assert time.monotonic() - start < 15
    assert r.status.value == "error" and r.error.value == "timeout"
    assert r.reason == "Grader timed out after 2s"
    child = int(pidfile.read_text())
    deadline = time.monotonic() + 3
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child), "the background child must be killed with its group"


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def test_scrub_env(tmp_path):
    # Programs inherit the environment the settings came from (``Settings.environ``), not os.environ.
    resources = Resources(process_runner=LocalProcessRunner(environ={**os.environ, "ASSAY_SECRET": "s3cret"}))
    code = "import os, sys; sys.exit(0 if os.environ.get('ASSAY_SECRET') is None and os.environ['KEEP'] == '1' else 1)"
    sample = Sample(id="s1", workspace=str(tmp_path))
    for scrub, passed in ((True, True), (False, False)):
        spec = compile_spec({"type": "program", "config": {**py(code), "scrub_env": scrub, "env": {"KEEP": "1"}}})
        assert spec.build(resources).grade(sample).passed is passed


def test_stdout_cap_and_stderr_tail(tmp_path):
    r = grade({**py("import sys; sys.stderr.write('x' * 100000 + 'END'); print('a' * 5000)"),
               "max_output_bytes": 1024}, tmp_path=tmp_path)
    assert r.status.value == "failed" and "cap" in r.reason
    assert r.details["stderr"].endswith("END") and r.details["stderr_truncated"]


def test_missing_workspace_is_an_error(tmp_path):
    r = grade({"program": "true"}, Sample(id="s", workspace=str(tmp_path / "nope")))
    assert r.status.value == "error" and "not a directory" in r.reason


def test_relative_script_found_in_base_dir(tmp_path):
    suite, ws = tmp_path / "suite", tmp_path / "ws"
    (suite / "graders").mkdir(parents=True)
    ws.mkdir()
    (suite / "graders" / "ok.py").write_text("pass\n")
    spec = compile_spec({"type": "program", "config": {"program": PY, "args": ["graders/ok.py"]}},
                        context=SpecContext(base_dir=suite))
    r = spec.build(default_resources()).grade(Sample(id="s", workspace=str(ws)))
    assert r.status.value == "passed", r.details


def test_taxonomy_and_io_bound():
    cls = compile_spec({"type": "program", "config": {"program": "true"}}).grader_cls
    assert cls.traits.io_bound and cls.taxonomy.temporal_scope == "trajectory-level"
    assert cls.taxonomy.determinism == "static" and cls.taxonomy.reference == "reference-free"


def test_runs_through_the_process_runner_interface(tmp_path, fake_process_runner):
    from assay.core.interfaces import Resources

    fake = fake_process_runner(returncode=3)
    spec = compile_spec({"type": "program", "config": {"program": "checker", "args": ["--strict"],
                                                       "workspace": str(tmp_path), "timeout": "2s"}})
    r = spec.build(Resources(process_runner=fake)).grade(Sample(id="s", output="x"))
    assert (r.passed, r.reason) == (False, "Grader exited with exit code 3")
    call = fake.calls[0]
    assert call.argv == ["checker", "--strict"] and call.timeout_s == 2.0
    assert call.env["EVALUATE_WORKSPACE"] == os.path.realpath(tmp_path)
    none = spec.build(Resources()).grade(Sample(id="s"))
    assert none.error == "unavailable" and "no process runner" in none.reason


# -- hostile configs: refused when the spec is validated, naming the field

@pytest.mark.parametrize("config, field, text", [
    ({"env": {"A=B": "x"}}, "config.env", "not an environment variable name"),
    ({"env": {"": "x"}}, "config.env", "not an environment variable name"),
    ({"env": {"A\0B": "x"}}, "config.env", "not an environment variable name"),
    ({"env": {"FOO": "a\0b"}}, "config.env.FOO", "NUL"),
    ({"env": {"FOO": "\ud800"}}, "config.env.FOO", "lone surrogate U+D800"),
    ({"program": "py\0thon"}, "config.program", "NUL"),
    ({"args": ["ok", "a\0b"]}, "config.args[1]", "NUL"),
    ({"args": ["\udcff"]}, "config.args[0]", "lone surrogate"),
    ({"args": ["x" * 200_000]}, "config.args[0]", "longer than 131071 bytes"),
    ({"args": ["x" * 70_000, "y" * 70_000], "shell": True}, "config", "shell command"),
    ({"workspace": "/tmp\0x"}, "config.workspace", "NUL"),
    ({"base_dir": "/tmp"}, "config.base_dir", "unknown field"),
    ({"sub_path": "a\0b"}, "config.sub_path", "NUL"),
    ({"timeout": float("inf")}, "config.timeout", "at most 3600s"),
    ({"timeout": float("nan")}, "config.timeout", "greater than zero"),
    ({"timeout": -5}, "config.timeout", "greater than zero"),
    ({"timeout": 10**400}, "config.timeout", "at most 3600s"),
    ({"timeout": "2h"}, "config.timeout", "at most 3600s (got 7200s)"),
    ({"timeout": "9" * 400 + "s"}, "config.timeout", "at most 3600s"),
    ({"timeout": "x" * 100_000}, "config.timeout", "invalid duration"),
    ({"max_output_bytes": float("nan")}, "config.max_output_bytes", ""),
])
def test_hostile_config_is_a_spec_error(config, field, text):
    with pytest.raises(SpecError) as exc:
        compile_spec({"type": "program", "config": {"program": "true", **config}})
    message = str(exc.value)
    assert message.startswith(f"{field}: ") and text in message
    assert len(message) < 300


def test_longest_timeout_is_accepted():
    assert compile_spec({"type": "program", "config": {"program": "true", "timeout": "1h"}}).config.timeout == 3600


# -- hostile output: a clean failed grade (Vally's semantics), always writable

def printing(tmp_path, data: bytes, **extra) -> dict:
    (tmp_path / "out.bin").write_bytes(data)
    return {**py("import sys; sys.stdout.buffer.write(open('out.bin', 'rb').read())"), **extra}


def report(**fields) -> bytes:
    doc = {"name": "n", "passed": True, "score": 1, "evidence": "e", "kind": "code", **fields}
    return json.dumps(doc).encode()


DEEP = b"[" * 100_000 + b"]" * 100_000


@pytest.mark.parametrize("data, status, reason", [
    (b"\xff\xfe{}", "failed", "Grader returned unparseable JSON output on stdout: JSONDecodeError"),
    (DEEP, "failed", "Grader returned unparseable JSON output on stdout: nested more than 100 levels deep"),
    (report(metadata={"a": "x"}).replace(b'"x"', b"[" * 150 + b"]" * 150), "failed",
     "Grader returned unparseable JSON output on stdout: nested more than 100 levels deep"),
    (b'{"a": ' + b"9" * 5000 + b"}", "failed", "Grader returned unparseable JSON output on stdout: ValueError"),
    (report(score=1.5), "failed", "Grader output did not match schema: score"),
    (report(score="0.5"), "failed", "Grader output did not match schema: score"),
    (report().replace(b'"score": 1', b'"score": NaN'), "failed", "Grader output did not match schema: score"),
    (report().replace(b'"score": 1', b'"score": ' + b"9" * 40), "failed", "Grader output did not match schema: score"),
    (json.dumps({f"k{i}": i for i in range(50_000)}).encode(), "failed", "Grader output did not match schema"),
    (json.dumps({"k" * 100_000: 1}).encode(), "failed", "Grader output did not match schema"),
    (b"null", "failed", "Grader output did not match schema: <root>"),
    (report(passed=True, score=0), "passed", "e"),  # Vally: `passed` decides, whatever the score
])
def test_hostile_output_is_a_clean_result(data, status, reason, tmp_path):
    r = grade(printing(tmp_path, data), tmp_path=tmp_path)
    assert r.status.value == status and r.reason.startswith(reason)
    assert len(r.details.get("schema_errors", [])) <= 11
    assert all(len(p) <= 200 for p in r.details.get("schema_errors", []))
    orjson.dumps(r.model_dump())


def test_odd_values_in_a_report_are_normalised(tmp_path):
    data = (report(name="\\ud800", evidence="ok \\udfff", metadata={"\\ud800k": "\\udc00", "nan": 1, "big": 2})
            .replace(b"\\\\u", b"\\u").replace(b'"nan": 1', b'"nan": NaN')
            .replace(b'"big": 2', b'"big": ' + b"9" * 30))
    r = grade(printing(tmp_path, data), tmp_path=tmp_path)
    assert (r.status.value, r.reason) == ("passed", "ok \ufffd")
    assert r.details["metadata"] == {"\ufffdk": "\ufffd", "nan": "NaN", "big": "9" * 30}
    assert r.details["reported_name"] == "\ufffd"
    orjson.dumps(r.model_dump())


def test_large_output_within_the_cap_is_parsed(tmp_path):
    data = report(metadata={"blob": "x" * (10 << 20)})
    r = grade(printing(tmp_path, data, max_output_bytes=64 << 20), tmp_path=tmp_path)
    assert r.status.value == "passed" and len(r.details["metadata"]["blob"]) == 10 << 20
    r = grade(printing(tmp_path, data), tmp_path=tmp_path)  # the default 1 MiB cap
    assert r.status.value == "failed" and "exceeded the 1048576-byte cap" in r.reason


# -- hostile samples: handed to the program cleanly, or a clean error

def test_odd_sample_values_reach_the_program_cleaned(tmp_path):
    code = ("import json, os; d = json.load(open(os.environ['EVALUATE_GRADER_INPUT'], encoding='utf-8'));"
            "assert d['output'] == '\\ufffd' and d['metadata'] == {'x': 'NaN', 'y': '1' + '0' * 30}, d")
    sample = Sample(id="s", output="\ud800", metadata={"x": float("nan"), "y": 10**30}, workspace=str(tmp_path))
    r = grade(py(code), sample)
    assert r.status.value == "passed", r.details.get("stderr")


def test_sample_too_deep_for_the_program_is_an_error(tmp_path):
    deep: list = []
    for _ in range(150):
        deep = [deep]
    r = grade({"program": "true"}, Sample(id="s", metadata={"d": deep}, workspace=str(tmp_path)))
    assert r.status.value == "error" and r.error.value == "invalid_output"
    assert "nested more than 100 levels deep" in r.reason


# -- nothing the program starts outlives the grade, or holds it

def test_background_job_holding_stdout_does_not_hold_the_grade(tmp_path):
    pidfile = tmp_path / "bg.pid"
    start = time.monotonic()
    r = grade({"program": f"sleep 30 & echo $! > {pidfile}", "shell": True, "timeout": "20s"}, tmp_path=tmp_path)
    assert time.monotonic() - start < 5
    assert (r.status.value, r.reason) == ("passed", "Grader exited successfully")
    assert not _alive(int(pidfile.read_text()))
