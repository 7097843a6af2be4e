"""Conformance with the peers, data-driven: tests/peers/waza/cases.yaml (from waza's Go tests,
each citing file, test and commit; generated.yaml when `make peers-refresh` wrote one) and
tests/peers/vally/cases.yaml (from Vally's documentation pages). The facts are the peers'; this
code runs them through assay's graders."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from assay.core.context import SpecContext
from assay.core.errors import SpecError
from assay.core.sample import Sample
from assay.core.spec import compile_spec
from assay.runner.resources import default_resources

HERE = Path(__file__).parent


def _cases(*files: str) -> list[Any]:
    out = []
    for name in files:
        if (HERE / name).exists():
            for c in yaml.safe_load((HERE / name).read_text()) or []:
                s = c["source"]
                out.append(pytest.param(c, id=f"{s.get('test') or s.get('rule')} [{s.get('commit', s.get('page'))}]"))
    return out


def _events(calls: list[Any]) -> list[dict[str, Any]]:
    calls = [{"name": c} if isinstance(c, str) else c for c in calls]
    return [{"type": "tool_call", "name": c["name"], "arguments": c.get("arguments", {})} for c in calls]


def _spec(case: dict[str, Any], tmp_path: Path):
    if "skill_md" in case:
        (tmp_path / "SKILL.md").write_text(case["skill_md"])
    for name, text in case.get("suite_files", {}).items():  # beside the suite (snapshots, fixtures)
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return compile_spec({"name": "g", **case["assay"]}, context=SpecContext(base_dir=tmp_path))


def _check(case: dict[str, Any], tmp_path: Path) -> None:
    expect = case["expect"]
    if "error" in expect:
        with pytest.raises(SpecError, match=expect["error"].replace("(", r"\(").replace(")", r"\)")):
            _spec(case, tmp_path)
        return
    workspace = None
    if "workspace" in case:  # files the run left, relative to its workspace
        workspace = tmp_path / "ws"
        workspace.mkdir()
        for name, text in case["workspace"].items():
            (workspace / name).parent.mkdir(parents=True, exist_ok=True)
            (workspace / name).write_text(text)
    sample = Sample(id="s", input=case.get("prompt"), output=case.get("output", ""), duration_ms=case.get("duration_ms"),
                    workspace=str(workspace) if workspace else None,
                    metadata=case.get("metadata", {}),
                    transcript=case.get("transcript") or _events(case.get("tool_calls", [])))
    result = _spec(case, tmp_path).build(default_resources()).grade(sample)
    why = (case["source"], result.reason)
    assert result.passed is expect["passed"], why
    if "score" in expect:
        assert result.score == pytest.approx(expect["score"], abs=0.01), why
    assert result.score >= expect.get("score_at_least", 0.0), why
    assert result.score < expect.get("score_below", 2.0), why
    assert result.score > expect.get("score_above", -1.0), why
    for part in expect.get("reason", []):
        assert part in (result.reason or ""), why
    for key, value in expect.get("details", {}).items():
        got = result.details.get(key)
        assert (sorted(got) if isinstance(got, list) else got) == value, (why, key)


@pytest.mark.parametrize("case", _cases("waza/cases.yaml", "waza/generated.yaml"))
def test_waza_verdicts(case, tmp_path):
    _check(case, tmp_path)


@pytest.mark.parametrize("case", _cases("vally/cases.yaml"))
def test_vally_verdicts(case, tmp_path):
    _check(case, tmp_path)


def test_every_case_cites_its_source():
    for case in yaml.safe_load((HERE / "waza" / "cases.yaml").read_text()):
        assert {"file", "test", "commit"} <= set(case["source"]) and case["release"], case
    for case in yaml.safe_load((HERE / "vally" / "cases.yaml").read_text()):
        assert {"page", "rule"} <= set(case["source"]), case


@pytest.mark.parametrize("case", _cases("waza/loader_cases.yaml"))
def test_waza_loader_cases(case, tmp_path):
    from assay.runner.suites import load_suite

    (tmp_path / "tasks").mkdir()
    (tmp_path / "eval.yaml").write_text("name: e\nskill: s\ntasks: [tasks/*.yaml]\n"
                                        "config: {trials_per_task: 1, timeout_seconds: 60}\n")
    (tmp_path / "tasks" / "t.yaml").write_text(case["task"])
    for name, text in case.get("files", {}).items():  # beside the task file
        (tmp_path / "tasks" / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "tasks" / name).write_text(text)
    task_id = yaml.safe_load(case["task"])["id"]
    (tmp_path / "results.jsonl").write_text(f'{{"task_id": "{task_id}", "output": "done"}}\n')
    if case["expect"] == "loads":
        suite = load_suite(tmp_path / "eval.yaml", context=SpecContext(), waza_version=case["release"])
        assert suite.warnings == [] and len(suite.samples) == 1, case["source"]
        if "input" in case:
            assert suite.samples[0].input == case["input"], case["source"]
    else:
        with pytest.raises(SpecError, match=case["expect"]["error"]):
            load_suite(tmp_path / "eval.yaml", context=SpecContext(), waza_version=case["release"])
