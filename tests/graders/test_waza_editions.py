"""waza's two editions: the context ``code`` assertions and ``script`` graders see, how waza
evaluates assertions, and waza's ``program`` grader. Expected values are worked out from waza's
source (Python edition: waza/runner.py, graders/code_graders.py; Go edition:
internal/graders/inline_script_grader.go, data/eval_wrapper.py|js, models/events.go,
program_grader.go)."""

import json
import re
import sys

import pytest

import assay
from assay.core.sample import Sample
from assay.core.transcript import parse_transcript
from assay.graders._waza_context import assertion_context, go_tool_calls, go_transcript, python_conversation

GO_EVENTS = [
    {"type": "user.message", "content": "fix the build"},
    {"type": "tool.execution_start", "tool_call_id": "c1", "tool_name": "bash",
     "arguments": {"command": "make", "description": "build", "timeout": 30}},
    {"type": "tool.execution_complete", "tool_call_id": "c1", "success": False,
     "tool_result": {"content": "make: *** error 2"}},
    {"type": "tool.execution_start", "tool_name": "view", "arguments": {"path": "a.c"}},  # no id: waza drops it
    {"type": "session.error", "message": "rate limited"},
    {"type": "assistant.message", "content": "Fixed: no Errors left"},
]


def _sample(events, **kw):
    return Sample(id="t1", transcript=parse_transcript(events), **kw)


def test_go_transcript_and_tool_calls_have_wazas_shapes():
    events = parse_transcript(GO_EVENTS)
    transcript = go_transcript(events)
    assert transcript[1] == {"type": "tool.execution_start", "tool_call_id": "c1", "tool_name": "bash",
                             "arguments": {"command": "make", "description": "build", "timeout": 30}}
    assert transcript[2] == {"type": "tool.execution_complete", "tool_call_id": "c1", "success": False,
                             "tool_result": {"content": "make: *** error 2"}}
    assert go_tool_calls(events) == [{
        "name": "bash", "success": False, "result": {"content": "make: *** error 2"},
        "arguments": {"path": "", "file_text": "", "command": "make", "description": "build", "skill": ""}}]


def test_go_errors_are_case_sensitive_and_python_errors_are_not():
    sample = _sample(GO_EVENTS, output="done")
    go = assertion_context(sample, "go")
    assert [e["type"] for e in go["errors"]] == ["session.error"]  # "Errors" in the message does not count
    py = assertion_context(sample, "python")
    # the Python edition's conversation has no error events: entries whose content mentions
    # "error" in any case count (the failed make's completion, and "Errors" in the reply)
    assert [e["role"] for e in py["errors"]] == ["tool", "assistant"]


def test_python_conversation_keeps_recorded_tool_content_and_renders_arguments_otherwise():
    recorded = [{"role": "tool", "name": "bash", "content": "{'command': 'ls'}"},
                {"role": "assistant", "content": "ok"}]
    assert python_conversation(parse_transcript(recorded)) == recorded
    native = [{"type": "tool_call", "name": "bash", "arguments": {"command": "x" * 600}}]
    [entry] = python_conversation(parse_transcript(native))
    assert entry["role"] == "tool" and len(entry["content"]) == 500 and entry["content"].startswith("{'command': 'xx")


@pytest.mark.parametrize("edition, assertion, passed", [
    ("go", "len(tool_calls) == 1 and tool_calls[0]['arguments']['command'] == 'make'", True),
    ("go", "tool_calls[0]['success'] is False", True),
    ("go", "len(errors) == 1", True),
    ("go", "transcript[1]['tool_name'] == 'bash'", True),
    # every tool.* event is a tool entry in the Python edition: start, completion, start
    ("python", "len(tool_calls) == 3 and tool_calls[1]['name'] == 'bash'", True),
    ("python", "len(errors) == 0", False),
    # waza evaluates with no builtins beyond its list: max() is unknown
    ("python", "max([1, 2]) == 2", False),
    ("go", "max([1, 2]) == 2", False),
    # names used inside a generator body are globals there, which waza leaves empty
    ("python", "any(re.search('mak', t['content']) for t in tool_calls)", False),
    ("python", "any('make' in t['content'] for t in tool_calls)", True),
])
def test_assertions_evaluate_as_waza_does(edition, assertion, passed):
    spec = {"type": "code", "config": {"assertions": [assertion], "edition": edition}}
    r = assay.grade(spec, _sample(GO_EVENTS, output="done"))
    assert r.status == ("passed" if passed else "failed"), r.details["assertions"]


def test_waza_feedback_names_each_failure_with_its_error():
    spec = {"type": "code", "config": {"assertions": ["len(output) > 0", "output == 'x'", "nope > 1"],
                                       "edition": "go"}}
    r = assay.grade(spec, {"output": "done"})
    assert r.score == pytest.approx(1 / 3)
    assert r.reason == "Failed: output == 'x'; Failed: nope > 1: name 'nope' is not defined"


def test_no_assertions_pass_as_in_waza():
    r = assay.grade({"type": "code", "config": {"assertions": [], "edition": "go"}}, {"output": ""})
    assert r.passed and r.score == 1.0 and r.reason == "No assertions configured"


@pytest.mark.node_sandbox
def test_javascript_assertions_run_in_the_node_sandbox():
    spec = {"type": "code", "config": {"language": "nodejs", "edition": "go", "assertions": [
        "output.includes('done')",
        "tool_calls.length === 1 && tool_calls[0].arguments.command === 'make'",
        "errors.length === 1",
        "const n = tool_calls.length; n > 5",
        "missing.length",
    ]}}
    r = assay.grade(spec, _sample(GO_EVENTS, output="all done"))
    assert [a["passed"] for a in r.details["assertions"]] == [True, True, True, False, False]
    # An unknown name fails its assertion with an error (inside the sandbox's compartment an
    # unknown global reads as undefined, so it is the property read that throws).
    assert re.search(r"ReferenceError|TypeError: Cannot read properties of undefined", r.details["assertions"][4]["error"])


def test_python_script_reads_the_whole_task(tmp_path):
    script = tmp_path / "check.py"
    script.write_text("import json, sys\nctx = json.load(sys.stdin)\n"
                      "ok = ctx['task']['inputs']['context'] == {'lang': 'go'} and sorted(ctx) == "
                      "['duration_ms', 'metadata', 'outcome', 'output', 'task', 'transcript']\n"
                      "print(json.dumps({'score': 1.0 if ok else 0.0, 'passed': ok, 'message': str(sorted(ctx))}))\n")
    task = {"id": "t1", "name": "T", "inputs": {"prompt": "p", "context": {"lang": "go"}, "files": [],
                                                "environment": {}}}
    spec = {"type": "script", "config": {"script": str(script), "edition": "python"}}
    r = assay.grade(spec, Sample(id="t1", output="o", metadata={"waza_task": task}))
    assert r.passed, r.reason


@pytest.mark.parametrize("args, passed, reason", [
    (["-c", "import sys, os; d = sys.stdin.read(); print('got', d, os.environ['WAZA_WORKSPACE_DIR'])"], True,
     "got hello /ws"),
    (["-c", "import sys; print('bad', file=sys.stderr); sys.exit(3)"], False,
     "Program exited with error: exit status 3; stderr: bad"),
    (["-c", "pass"], True, "Program exited successfully"),
])
def test_waza_program_exit_code_decides(args, passed, reason):
    spec = {"type": "waza_program", "config": {"command": sys.executable, "args": args}}
    r = assay.grade(spec, Sample(id="s", output="hello", workspace="/ws"))
    assert (r.passed, r.score, r.reason) == (passed, 1.0 if passed else 0.0, reason)


def test_waza_program_timeout_fails_and_missing_command_is_an_error():
    spec = {"type": "waza_program", "config": {"command": sys.executable, "args": ["-c", "import time; time.sleep(5)"],
                                               "timeout": 1}}
    r = assay.grade(spec, {"output": ""})
    assert r.status == "failed" and r.details["timed_out"]
    r = assay.grade({"type": "waza_program", "config": {"command": "no-such-program-here"}}, {"output": ""})
    assert r.status == "error" and r.error == "unavailable"
    assert json.loads(json.dumps(r.details))["command"] == "no-such-program-here"
