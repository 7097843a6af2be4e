"""waza's diff grader (internal/graders/diff_grader.go): snapshots and +/- fragments."""

import pytest

from assay.core.context import SpecContext
from assay.core.errors import SpecError
from assay.core.sample import Sample
from assay.core.spec import compile_spec


@pytest.fixture
def dirs(tmp_path):
    ws, suite = tmp_path / "ws", tmp_path / "suite"
    (suite / "fixtures").mkdir(parents=True)
    (suite / "snaps").mkdir()
    ws.mkdir()
    (ws / "config.json").write_text('{"port": 8080}\n')
    (suite / "fixtures" / "config.json").write_text('{"port": 8080}\n')
    (suite / "snaps" / "config.json").write_text('{"port": 80}\n')
    return ws, suite


def grade(suite, config, ws):
    spec = compile_spec({"type": "waza_diff", "config": config}, context=SpecContext(base_dir=suite))
    return spec.build().grade(Sample(id="s", output="", workspace=str(ws) if ws else None))


@pytest.mark.parametrize("entry, extra, passed, score", [
    ({"path": "config.json", "snapshot": "config.json"}, {}, True, 1.0),              # fixtures/ by default
    ({"path": "config.json", "snapshot": "config.json"}, {"context_dir": "snaps"}, False, 0.5),
    ({"path": "config.json", "contains": ["+8080", '"port"', "-debug"]}, {}, True, 1.0),
    ({"path": "config.json", "contains": ["-8080", "+ 9090 "]}, {}, False, 1 / 3),
    ({"path": "config.json", "contains": ["+", "8080"]}, {}, True, 1.0),           # empty fragment skipped, counted
    ({"path": "gone.json", "snapshot": "config.json", "contains": ["a"]}, {}, False, 0.0),
])
def test_diff(dirs, entry, extra, passed, score):
    ws, suite = dirs
    r = grade(suite, {"expected_files": [entry], **extra}, ws)
    assert (r.passed, r.score) == (passed, pytest.approx(score))


def test_missing_snapshot_fails_its_check(dirs):
    ws, suite = dirs
    r = grade(suite, {"expected_files": [{"path": "config.json", "snapshot": "nope.json"}]}, ws)
    assert not r.passed and r.score == 0.5 and "Failed to read snapshot file nope.json" in r.reason


def test_no_workspace_fails(dirs):
    r = grade(dirs[1], {"expected_files": [{"path": "a", "contains": ["x"]}]}, None)
    assert not r.passed and "No workspace" in r.reason


@pytest.mark.parametrize("config, message", [
    ({"expected_files": []}, "at least 1"),
    ({"expected_files": [{"path": "a"}]}, "needs 'snapshot' or 'contains'"),
    ({"expected_files": [{"path": "../a", "contains": ["x"]}]}, "outside the workspace"),
])
def test_bad_config(dirs, config, message):
    with pytest.raises(SpecError, match=message):
        grade(dirs[1], config, dirs[0])
