"""tests/peers/refresh.py on a small source folder written here: new kinds and keys are named,
TestMatcherEquals-style rows become cases, and a verdict that moves between runs is reported."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import yaml

SPEC = importlib.util.spec_from_file_location("peers_refresh", Path(__file__).parent / "refresh.py")
assert SPEC is not None and SPEC.loader is not None
refresh = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(refresh)

MODELS = '''package models
const (
\tGraderKindText GraderKind = "text"
\tGraderKindShiny GraderKind = "shiny"
)
type ShinyGraderParameters struct {
\tGlow int `yaml:"glow,omitempty"`
}
'''
TABLE = '''package argmatcher
func TestMatcherEquals(t *testing.T) {
\tcases := []struct{}{
\t\t{"same text", "a", "a", %s},
\t\t{"number", 1, 1.0, true},
\t}
}
'''


def tree(root: Path, verdict: str) -> Path:
    (root / "internal/models").mkdir(parents=True, exist_ok=True)
    (root / "internal/graders/argmatcher").mkdir(parents=True, exist_ok=True)
    (root / "internal/models/outcome.go").write_text(MODELS)
    (root / "internal/graders/argmatcher/matcher_test.go").write_text(TABLE % verdict)
    return root


def test_new_kinds_keys_and_moved_verdicts_are_reported(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(refresh, "HERE", tmp_path / "peers")
    (tmp_path / "peers/waza").mkdir(parents=True)
    (tmp_path / "peers/waza/cases.yaml").write_text("[]\n")
    src = tree(tmp_path / "waza", "true")
    assert refresh.main([str(src), "--write"]) == 1
    out = capsys.readouterr().out
    assert "grader kinds new in waza: shiny" in out and "new parameter type ShinyGraderParameters: glow" in out
    generated = yaml.safe_load((tmp_path / "peers/waza/generated.yaml").read_text())
    assert [(c["source"]["test"], c["expect"]["passed"]) for c in generated] == [
        ("TestMatcherEquals/same text", True), ("TestMatcherEquals/number", True)]
    tree(src, "false")
    refresh.main([str(src)])
    assert "verdict moved: TestMatcherEquals/same text: {'passed': True} -> {'passed': False}" in capsys.readouterr().out
