"""``export_vally`` round trip: grading a Vally suite, exporting the verdicts with the runs, and
reading the export back as the suite's results (``assay run SPEC --results exported.json``)
gives the same samples and the same verdicts. The export is in Vally's shapes: trial results
(``graderResults`` of ``{name, passed, score, evidence, kind, metadata}``) holding trajectories
(``{id, stimulus, events, metrics, output, workDir, metadata}`` with ``{type, timestamp,
data}`` events, turn markers and skill activations;
microsoft.github.io/vally/reference/trajectory-format/)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from assay.core.context import SpecContext
from assay.core.errors import SpecError
from assay.runner.export_vally import export_vally
from assay.runner.local_engine.run import run_suite
from assay.runner.suites import load_suite

EVAL = """\
name: round-trip
stimuli:
  - name: build
    prompt: Build and test the project.
    graders:
      - type: output-contains
        config: {substring: "build ok"}
      - type: completed
      - {type: turn-count, config: {max: 1}}
      - {type: token-budget, config: {max: 1000}}
      - {type: wall-time, config: {max: 1m}}
      - {type: error-count, config: {max: 0}}
      - {type: file-exists, config: {path: "dist/*.js"}}
      - type: tool-calls
        config:
          required: [{name: bash, command: "npm test", at_step: 1}]
          disallowed: [{name: bash, args: {command: "rm -rf"}}]
      - {type: skill-invocation, config: {required: [builder]}}
  - name: inline
    prompt: Say hello.
    output: Hello there
    events:
      - {type: user_message, content: Say hello.}
      - {type: tool_call, name: skill, arguments: {skill: greeter}}
      - {type: assistant_message, content: Hello there}
    graders:
      - type: completed
      - {type: skill-invocation, config: {required: [greeter]}}
      - {type: wall-time, config: {max: 1m}}
      - {type: tool-calls, config: {required: [{name: skill, args: {skill: greeter}}]}}
scoring:
  weights: {output-contains: 3}
  threshold: 0.6
"""


def ev(kind, **data):
    return {"type": kind, "timestamp": "2025-01-15T10:30:00.000Z", "data": data}


def trajectory(output, *, turns, failed_call=False, tokens=600, wall=30000):
    events = [ev("turn_start", turnId="turn-1"), ev("skill_activation", skillName="builder"),
              ev("tool_call", toolName="bash", toolCallId="c1", arguments={"command": "npm run build"}),
              ev("tool_result", toolName="bash", toolCallId="c1", success=True, result="built"),
              ev("token_usage", inputTokens=tokens, outputTokens=100), ev("turn_end", turnId="turn-1")]
    if turns > 1:
        events += [ev("turn_start", turnId="turn-2"), ev("tool_call", toolName="bash", toolCallId="c2",
                                                          arguments={"command": "npm test"}),
                   ev("tool_result", toolName="bash", toolCallId="c2", error="exit 1") if failed_call else
                   ev("tool_result", toolName="bash", toolCallId="c2", success=True, result="3 passing"),
                   ev("tool_call", toolName="view", toolCallId="c3"),
                   ev("assistant_message", content=output), ev("turn_end", turnId="turn-2")]
    return {"id": f"run-{turns}", "stimulus": {"name": "build"}, "output": output, "workDir": "ws",
            "metrics": {"wallTimeMs": wall, "totalTokens": tokens + 100}, "metadata": {"model": "gpt-5.5"},
            "events": events}


TRIALS = [
    {"stimulus": "build", "trial": 1, "trajectory": trajectory("Build OK, 3 passing", turns=2)},
    {"stimulus": "build", "trial": 2, "trajectory": trajectory("build failed", turns=2, failed_call=True,
                                                               tokens=1400, wall=90000)},
    {"stimulus": "build", "trial": 3, "trajectory": trajectory("Build ok", turns=1)},
]


def grade(suite):
    return run_suite(suite, concurrency=1).verdicts


def summary(verdicts):
    return [(v.id, v.status.value, v.score, [(r.name, r.status.value, r.passed, r.score, r.reason)
                                             for r in v.results]) for v in verdicts]


@pytest.fixture
def graded(tmp_path):
    (tmp_path / "eval.yaml").write_text(EVAL)
    (tmp_path / "trajectories.jsonl").write_text("".join(json.dumps(t) + "\n" for t in TRIALS))
    (tmp_path / "ws" / "dist").mkdir(parents=True)
    (tmp_path / "ws" / "dist" / "app.js").write_text("console.log(1)\n")
    suite = load_suite(tmp_path / "eval.yaml", context=SpecContext())
    return tmp_path, suite, grade(suite)


def test_export_read_back_gives_the_same_samples_and_verdicts(graded):
    tmp_path, suite, verdicts = graded
    exported = tmp_path / "out" / "exported.json"
    exported.parent.mkdir()
    exported.write_text(json.dumps(export_vally(suite, verdicts)))
    (tmp_path / "trajectories.jsonl").unlink()          # only the export is left to grade
    again = load_suite(tmp_path / "eval.yaml", results=exported, context=SpecContext())
    assert [s.model_dump() for s in again.samples] == [s.model_dump() for s in suite.samples]
    assert summary(grade(again)) == summary(verdicts)
    # Vally's weighted verdict (concepts/scoring/): output-contains weighs 3, the other eight 1, so
    # #1 loses only turn-count (2 turns, max 1: 0), 10/11; #2 loses output-contains and turn-count,
    # and token-budget (1500/1000) and wall-time (90s/1m) fall off to 0.5 each, 6/11 < 0.6;
    # #3 misses only the npm test call in step 1, 10/11. inline's wall-time has no duration: error.
    got = {v.id: (v.status.value, v.score) for v in verdicts}
    assert got == {"build#1": ("passed", pytest.approx(10 / 11)), "build#2": ("failed", pytest.approx(6 / 11)),
                   "build#3": ("passed", pytest.approx(10 / 11)), "inline": ("error", pytest.approx(1.0))}


def test_the_export_is_in_vallys_shapes(graded):
    _, suite, verdicts = graded
    doc = export_vally(suite, verdicts)
    assert doc["name"] == "round-trip" and doc["summary"]["total"] == 4
    first, *_, inline = doc["samples"]
    assert (first["id"], first["stimulus"], first["trial"], first["passed"]) == ("build#1", "build", 1, True)
    assert {tuple(sorted(r)) for r in first["graderResults"]} == {
        ("evidence", "kind", "metadata", "name", "passed", "score")}
    traj = first["trajectory"]
    assert traj["stimulus"] == {"name": "build", "prompt": "Build and test the project."}
    assert traj["metrics"] == {"wallTimeMs": 30000, "totalTokens": 700} and traj["workDir"].endswith("/ws")
    kinds = [e["type"] for e in traj["events"]]
    assert kinds[:3] == ["turn_start", "skill_activation", "tool_call"] and kinds.count("turn_end") == 2
    assert kinds.index("turn_start", 1) < kinds.index("tool_call", kinds.index("turn_end")), kinds
    assert all(set(e) <= {"type", "timestamp", "data"} for e in traj["events"])
    assert traj["events"][2]["data"] == {"toolName": "bash", "toolCallId": "c1",
                                         "arguments": {"command": "npm run build"}}
    # a run without Vally-shaped events keeps its events flat, and adds no turns on the way back
    assert "trial" not in inline and "turns" not in inline["trajectory"]["metadata"]
    assert inline["trajectory"]["events"][1] == {"type": "tool_call", "toolName": "skill",
                                                 "arguments": {"skill": "greeter"}}


def test_an_export_without_the_runs_is_refused_rather_than_graded_empty(graded, tmp_path):
    _, suite, verdicts = graded
    bare = {"name": "round-trip", "samples": [{k: v for k, v in s.items() if k != "trajectory"}
                                              for s in export_vally(suite, verdicts)["samples"]]}
    path = tmp_path / "bare.json"
    path.write_text(json.dumps(bare))
    with pytest.raises(SpecError, match="not a Vally trajectory or trial result") as exc:
        load_suite(tmp_path / "eval.yaml", results=path, context=SpecContext())
    assert exc.value.where.endswith("bare.json[0]")


def test_assay_run_export_vally_then_results_gives_the_same_verdicts(graded):
    tmp_path, _, _ = graded

    def run(*args):
        return subprocess.run([sys.executable, "-m", "assay.cli.main", "run", str(tmp_path / "eval.yaml"), "-q", *args],
                              capture_output=True, text=True, timeout=120)

    first = run("--export", "vally", "--export-path", str(tmp_path / "first.json"))
    (tmp_path / "trajectories.jsonl").unlink()
    again = run("--results", str(tmp_path / "first.json"), "--export", "vally", "--export-path",
                str(tmp_path / "again.json"))
    assert (first.returncode, again.returncode) == (1, 1), first.stderr + again.stderr
    line = "2/4 passed, 1 failed, 1 errors, 0 pending; mean score 0.788"  # the errored sample out (0.841 in)
    assert line in first.stdout and line in again.stdout, first.stdout + again.stdout

    def verdicts(name):
        return [(s["id"], s["status"], s["score"], [(r["name"], r["passed"], r["score"], r["evidence"])
                                                    for r in s["graderResults"]])
                for s in json.loads((tmp_path / name).read_text())["samples"]]
    assert verdicts("again.json") == verdicts("first.json")
