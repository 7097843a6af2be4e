"""vally_run_command: Vally's run-command (microsoft.github.io/vally/reference/graders/run-command/)."""

import os

import pytest

from assay.core.errors import SpecError
from assay.core.interfaces import Resources
from assay.core.sample import Sample
from assay.core.spec import compile_spec
from assay.runner.resources import default_resources


def run(config, workspace, resources=None):
    spec = compile_spec({"type": "vally_run_command", "config": config})
    return spec.build(resources or default_resources()).grade(Sample(id="s", output="", workspace=str(workspace)))


@pytest.fixture
def ws(tmp_path):
    (tmp_path / "src" / "app").mkdir(parents=True)
    (tmp_path / "src" / "app" / "marker.txt").write_text("here")
    return tmp_path


@pytest.mark.parametrize("config, passed, reason", [
    ({"command": "echo OK && exit 0"}, True, "all checks passed"),                 # shell line
    ({"command": "exit 3"}, False, "exit code 3, expected 0"),
    ({"command": "exit 3", "expected_exit_code": 3}, True, "passed"),
    ({"command": "echo All Good", "stdout_contains": "Good"}, True, "passed"),
    ({"command": "echo All Good", "stdout_contains": "good"}, False, "does not contain 'good'"),
    ({"command": "echo oops >&2", "stderr_contains": "oops"}, True, "passed"),
    ({"command": "echo SUCCESS", "stdout_matches": "(?i)success"}, True, "passed"),
    ({"command": "echo SUCCESS", "stdout_matches": "success"}, False, "does not match"),
    ({"command": "echo fine", "stdout_not_matches": "(?i)error"}, True, "passed"),
    ({"command": "echo ERROR", "stdout_not_matches": "(?i)error"}, False, "stdout matches"),
    ({"command": "cat", "args": ["marker.txt"], "sub_path": "src/app", "stdout_contains": "here"}, True, "passed"),
    ({"command": "sh", "args": ["-c", "echo $GREETING"], "env": {"GREETING": "hi"}, "stdout_contains": "hi"},
     True, "passed"),
])
def test_run_command(ws, config, passed, reason):
    r = run(config, ws)
    assert r.passed is passed and reason in r.reason, r.reason


def test_args_mean_no_shell(ws, fake_process_runner):
    fake = fake_process_runner(returncode=0)
    run({"command": "node", "args": ["validate.js", "--strict"]}, ws, Resources(process_runner=fake))
    run({"command": "npm test"}, ws, Resources(process_runner=fake))
    assert [(c.argv, c.shell, c.timeout_s) for c in fake.calls] == [
        (["node", "validate.js", "--strict"], False, 30.0), (["npm test"], True, 30.0)]


def test_timeout_and_missing_binary_are_errors(ws):
    assert run({"command": "sleep 5", "timeout": "200ms"}, ws).error == "timeout"
    assert run({"command": "no-such-binary-xyz", "args": []}, ws).error == "unavailable"


def test_symlinked_sub_path_cannot_escape(ws, tmp_path_factory):
    outside = tmp_path_factory.mktemp("outside")
    os.symlink(outside, ws / "escape")
    r = run({"command": "true", "sub_path": "escape"}, ws)
    assert r.status.value == "error" and "escapes" in r.reason


@pytest.mark.parametrize("config, message", [
    ({}, "command"),
    ({"command": "x", "sub_path": "../up"}, "escapes"),
    ({"command": "x", "sub_path": "/abs"}, "relative"),
    ({"command": "x", "timeout": "soon"}, "duration"),
    ({"command": "x", "stdout_matches": "(a"}, "stdout_matches"),
])
def test_bad_configs(config, message):
    with pytest.raises(SpecError, match=message):
        compile_spec({"type": "vally_run_command", "config": config})
