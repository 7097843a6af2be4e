"""waza task checkpoints (graders/waza_checkpoint.py, dialects/_waza_checkpoints.py): a
checkpoint's graders see the run as it stood after its turn; the result never moves the run's
score and decides its verdict only as waza's runner does (checkpoints.go at 38eb0e8d: a failed
`on_failure: stop` checkpoint ends the run as an error; a failed `continue` one is recorded)."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.core.aggregate import judge_sample
from assay.core.context import SpecContext
from assay.core.errors import SpecError
from assay.core.sample import Sample
from assay.graders.waza_checkpoint import after_turn, turns
from assay.runner.execute import grade_one
from assay.runner.resources import default_resources
from assay.runner.suites import load_suite

TRANSCRIPT = """\
    - {type: user_message, content: Create a CSV reader}
    - {type: tool_call, name: create, arguments: {path: reader.py}}
    - {type: assistant_message, content: Created reader.py}
    - {type: user_message, content: Add error handling}
    - {type: tool_call, name: edit, arguments: {path: reader.py}}
    - {type: assistant_message, content: Added a FileNotFoundError handler}
"""


def suite_with(tmp_path: Path, checkpoints: str, version: str | None = None):
    (tmp_path / "tasks").mkdir(exist_ok=True)
    (tmp_path / "eval.yaml").write_text("name: e\nskill: s\ntasks: [tasks/*.yaml]\n"
                                        "config: {trials_per_task: 1, timeout_seconds: 60}\n"
                                        "graders:\n  - {type: text, name: final, config: {contains: [handler]}}\n")
    (tmp_path / "tasks" / "t.yaml").write_text(
        "id: t1\nname: T\ninputs:\n  prompt: Create a CSV reader\n  output: Added a FileNotFoundError handler\n"
        f"  transcript:\n{TRANSCRIPT}checkpoints:\n{checkpoints}")
    return load_suite(tmp_path / "eval.yaml", context=SpecContext(), waza_version=version)


def verdict(suite):
    sample = suite.samples[0]
    results = [grade_one(spec.build(default_resources()), sample) for spec in suite.graders_for(sample.id)]
    return judge_sample(sample.id, results), {r.name: r for r in results}


def test_turns_are_cut_at_user_messages():
    s = Sample(id="s", output="final", transcript=[
        {"type": "user_message", "content": "a"}, {"type": "assistant_message", "content": "one"},
        {"type": "user_message", "content": "b"}, {"type": "tool_call", "name": "bash"},
        {"type": "assistant_message", "content": "two"}], metadata={"session_digest": {"tool_calls": []}, "k": 1})
    assert turns(s) == 2 and turns(Sample(id="x", output="o")) == 1
    first = after_turn(s, 1)
    assert first.output == "one" and len(first.transcript) == 2 and first.metadata == {"k": 1}
    assert after_turn(s, 2).output == "final" and len(after_turn(s, 2).transcript) == 5


def test_each_checkpoint_sees_the_run_after_its_turn(tmp_path):
    suite = suite_with(tmp_path, """\
  - after_turn: 1
    graders:
      - {type: text, name: created, config: {contains: [created], not_contains: [handler]}}
      - {type: tool_calls, name: made, config: {required_tools: [create], forbidden_tools: [edit]}}
  - after_turn: 2
    on_failure: stop
    graders:
      - {type: text, name: handled, config: {contains: [FileNotFoundError]}}
""")
    got, results = verdict(suite)
    assert got.passed and got.score == 1.0  # weight 0: the score is the final grader's alone
    one, two = results["_checkpoint_after_turn_1"], results["_checkpoint_after_turn_2"]
    assert one.passed and one.details["checkpoint"]["status"] == "passed" and one.weight == 0.0
    assert [c["status"] for c in one.details["children"]] == ["passed", "passed"]
    assert two.passed and two.reason == "checkpoint after_turn=2 passed"


def test_a_failed_continue_checkpoint_is_recorded_and_a_failed_stop_one_fails_the_run(tmp_path):
    cps = """\
  - after_turn: 1
    on_failure: {mode}
    graders:
      - {{type: text, name: early, config: {{contains: [handler]}}}}
"""
    got, results = verdict(suite_with(tmp_path, cps.format(mode="continue")))
    r = results["_checkpoint_after_turn_1"]
    assert got.passed and r.passed and r.details["checkpoint"]["status"] == "failed"
    assert r.reason == "checkpoint after_turn=1 failed (on_failure: continue): early; recorded, the run goes on"
    got, results = verdict(suite_with(tmp_path, cps.format(mode="stop")))
    assert not got.passed and results["_checkpoint_after_turn_1"].reason == \
        "checkpoint after_turn=1 failed (on_failure: stop): early"


def test_a_turn_never_reached_is_reported_not_failed(tmp_path):
    got, results = verdict(suite_with(tmp_path, "  - {after_turn: 5, on_failure: stop, graders: "
                                                "[{type: text, name: late, config: {contains: [x]}}]}\n"))
    assert got.passed and "turn 5 was not reached (the run has 2 turn(s))" in results["_checkpoint_after_turn_5"].reason


@pytest.mark.parametrize("checkpoints, message, field", [
    ("  - {after_turn: 0, graders: [{type: text, name: g, config: {contains: [x]}}]}\n",
     "after_turn must be a turn number from 1", "checkpoints[0].after_turn"),
    ("  - {after_turn: 1, on_failure: halt, graders: [{type: text, name: g, config: {contains: [x]}}]}\n",
     "on_failure must be continue or stop", "checkpoints[0].on_failure"),
    ("  - {after_turn: 1}\n", "a checkpoint needs graders", "checkpoints[0].graders"),
    ("  - {after_turn: 1, when: later, graders: [{type: text, name: g, config: {contains: [x]}}]}\n",
     "field when not found in type models.Checkpoint", "checkpoints[0].when"),
    ("  - {after_turn: 1, graders: [{type: text, name: g, config: {contians: [x]}}]}\n",
     "field contians not found", "checkpoints[0].graders[0].config.contians"),
])
def test_bad_checkpoints_name_file_line_and_field(tmp_path, checkpoints, message, field):
    with pytest.raises(SpecError, match=message) as exc:
        suite_with(tmp_path, checkpoints, version="0.35")
    assert exc.value.path == field and exc.value.where.endswith("t.yaml:14")


def test_an_unknown_checkpoint_field_is_a_warning_before_0_24(tmp_path):
    suite = suite_with(tmp_path, "  - {after_turn: 1, when: later, graders: "
                                 "[{type: text, name: g, config: {contains: [created]}}]}\n", version="0.21")
    assert any("unknown checkpoint field 'when' ignored" in w for w in suite.warnings)


def test_exported_as_the_runs_checkpoint_outcomes(tmp_path):
    from assay.runner.export_waza import export_waza

    suite = suite_with(tmp_path, "  - {after_turn: 1, on_failure: stop, graders: "
                                 "[{type: text, name: early, config: {contains: [handler]}}]}\n")
    got, _ = verdict(suite)
    run = export_waza("e", suite.samples, [got])["tasks"][0]["runs"][0]
    assert "_checkpoint_after_turn_1" not in run["validations"] and run["status"] == "failed"
    (cp,) = run["checkpoints"]
    assert (cp["after_turn"], cp["status"], cp["stopped"]) == (1, "failed", True)
    assert cp["validations"]["early"]["type"] == "text" and not cp["validations"]["early"]["passed"]


@pytest.mark.parametrize("status, stopped, passes", [("passed", False, True), ("failed", True, False)])
def test_waza_recorded_outcome_is_used_when_the_transcript_shows_no_such_turn(status, stopped, passes):
    from assay.core.spec import compile_spec

    spec = compile_spec({"type": "waza_checkpoint", "name": "_checkpoint_after_turn_2", "weight": 0,
                         "config": {"after_turn": 2, "on_failure": "stop",
                                    "graders": [{"type": "waza_text", "name": "g", "config": {"contains": ["x"]}}]}})
    recorded = [{"after_turn": 2, "status": status, "stopped": stopped,
                 "validations": {"g": {"identifier": "g", "passed": passes, "score": float(passes)}}}]
    result = spec.build(default_resources()).grade(Sample(id="s", output="o", metadata={"checkpoints": recorded}))
    assert result.passed is passes and "as waza recorded it" in result.reason
