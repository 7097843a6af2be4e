"""`assay doctor` answers for the sandbox the CLI would open: the same settings, read once."""

import json
import os
import subprocess
import sys

import pytest

from assay.sandbox.doctor import diagnose


def doctor(**env):
    return subprocess.run([sys.executable, "-m", "assay.cli.main", "doctor", "--json"], capture_output=True,
                          text=True, env={**os.environ, **env}, timeout=120)


@pytest.mark.parametrize(("value", "weak"), [("on", True), ("yes", True), ("0", False), ("", False)])
def test_weak_mode_is_parsed_as_the_settings_parse_it(value, weak):
    """Every spelling Settings accepts (ASSAY_SANDBOX_ALLOW_WEAK=on too) means the same here."""
    r = doctor(ASSAY_SANDBOX_ALLOW_WEAK=value)
    assert json.loads(r.stdout)["weak_mode"] is weak, r.stderr


def test_the_configured_node_is_the_one_diagnosed(tmp_path):
    r = doctor(ASSAY_NODE=str(tmp_path / "no-node"))
    node = json.loads(r.stdout)["nodejs"]
    assert node["can_run"] is False and "no-node" in node["detail"] and "ASSAY_NODE" in node["detail"]


def test_a_malformed_setting_is_one_line():
    r = doctor(ASSAY_SANDBOX_ALLOW_WEAK="maybe")
    assert r.returncode == 2 and r.stderr.strip().count("\n") == 0
    assert "ASSAY_SANDBOX_ALLOW_WEAK='maybe'" in r.stderr and "Traceback" not in r.stderr


def test_diagnose_takes_its_settings_as_arguments(monkeypatch, tmp_path):
    monkeypatch.setenv("ASSAY_SANDBOX_ALLOW_WEAK", "1")
    monkeypatch.setenv("ASSAY_NODE", str(tmp_path / "no-node"))
    report = diagnose()  # the environment is not read below the CLI
    assert report["weak_mode"] is False
    assert "no-node" not in report["nodejs"]["detail"]
