"""What ``vally eval`` writes, graded by pointing assay at it: one set of trials written in
each output layout (a run directory's ``results.jsonl`` of trial results, an output directory
of timestamped runs, a ``trajectories/`` folder of trajectory files, one outcome object holding
its trials, a JSONL file of bare trajectories, a run found beside the eval file). Every layout
gives the same samples (each trial one, in trial order) and the verdicts Vally's grader pages
give. Records of no known shape are errors naming file and position.

Pages: reference/cli/eval/ (``--output-dir``, timestamped runs), reference/cli/experiment/
(``results.jsonl`` of trial results, ``run-summary.jsonl``), reference/cli/grade/ and
reference/cli/compare/ (a run directory or JSONL file, shapes told apart by their keys),
reference/trajectory-format/ (trajectory and events), reference/graders/ (verdicts); all under
microsoft.github.io/vally/.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from assay.core.aggregate import judge_sample
from assay.core.context import SpecContext
from assay.core.errors import SpecError
from assay.runner.execute import grade_one
from assay.runner.resources import default_resources
from assay.runner.suites import load_suite

EVAL = """\
name: layouts
stimuli:
  - name: add-tests
    prompt: Write tests for add.
    graders:
      - type: output-contains
        config: {substring: "tests pass"}
      - type: completed
      - type: turn-count
        config: {max: 1}
  - name: explain
    prompt: Explain the README.
    graders:
      - type: tool-calls
        config: {required: [{name: read_file, at_step: 0}]}
"""


def ev(kind: str, **data) -> dict:
    return {"type": kind, "timestamp": "2025-01-15T10:30:00.000Z", "data": data}


def traj(stimulus: str, output: str, events: list[dict], run_id: str) -> dict:
    return {"id": run_id, "stimulus": {"name": stimulus, "prompt": "..."}, "events": events, "output": output,
            "workDir": ".", "metrics": {"wallTimeMs": 1200}, "metadata": {"model": "gpt-5.5"}}


ONE_TURN = [ev("turn_start", turnId="turn-1"), ev("assistant_message", content="done"), ev("turn_end", turnId="turn-1")]
TWO_TURNS = [*ONE_TURN, ev("turn_start", turnId="turn-2"), ev("assistant_message", content="again"),
             ev("turn_end", turnId="turn-2")]
READS = [ev("turn_start", turnId="turn-1"),
         ev("tool_call", toolName="read_file", toolCallId="c1", arguments={"path": "README.md"}),
         ev("tool_result", toolName="read_file", toolCallId="c1", success=True, result="# Title"),
         ev("assistant_message", content="It explains the CLI."), ev("turn_end", turnId="turn-1")]

# (stimulus, trial, trajectory); written out of trial order, as concurrent trials finish.
TRIALS = [
    ("add-tests", 2, traj("add-tests", "Tests failed: 1 of 3", TWO_TURNS, "run-b")),
    ("explain", 1, traj("explain", "It explains the CLI.", READS, "run-c")),
    ("add-tests", 1, traj("add-tests", "All TESTS PASS", ONE_TURN, "run-a")),
]

# sample -> (status, {grader: (passed, score)}), from Vally's grader reference pages:
# output-contains is case-insensitive by default; completed needs output, no error events and
# a turn_end; turn-count falls off linearly past max (2 turns against 1 scores 0);
# tool-calls' at_step is the 0-based turn of the call.
EXPECTED = {
    "add-tests#1": ("passed", {"output-contains": (True, 1.0), "completed": (True, 1.0),
                               "turn-count": (True, 1.0)}),
    "add-tests#2": ("failed", {"output-contains": (False, 0.0), "completed": (True, 1.0),
                               "turn-count": (False, 0.0)}),
    "explain": ("passed", {"tool-calls": (True, 1.0)}),
}


def trial_results() -> list[dict]:
    """Trial-result records: the verdict Vally gave, the trajectory under ``trajectory``."""
    return [{"stimulus": s, "trial": n, "passed": None, "graderResults": [], "trajectory": t} for s, n, t in TRIALS]


def jsonl(rows: list[dict]) -> str:
    return "".join(json.dumps(r) + "\n" for r in rows)


def run_dir(tmp_path: Path) -> Path | None:
    (tmp_path / "results" / "2026-06-09T20-41-10-885Z").mkdir(parents=True)
    run = tmp_path / "results" / "2026-06-09T20-41-10-885Z"
    (run / "results.jsonl").write_text(jsonl(trial_results()))
    (run / "run-summary.jsonl").write_text(jsonl([{"passRate": 0.5, "stimulusCount": 2}]))
    (run / "report.md").write_text("# Report\n")
    return run


def output_dir(tmp_path: Path) -> Path | None:
    run_dir(tmp_path)
    older = tmp_path / "results" / "2026-06-01T08-00-00-000Z"
    older.mkdir()
    (older / "results.jsonl").write_text(jsonl([{"stimulus": "add-tests", "trajectory": traj("add-tests", "x", [], "old")}]))
    return tmp_path / "results"


def trajectory_files(tmp_path: Path) -> Path | None:
    folder = tmp_path / "out" / "trajectories"
    folder.mkdir(parents=True)
    for stimulus, n, t in TRIALS:
        (folder / f"{stimulus}-{n}.json").write_text(json.dumps({**t, "trialIndex": n}))
    return tmp_path / "out"


def outcome_object(tmp_path: Path) -> Path | None:
    by_stimulus: dict[str, list[dict]] = {}
    for stimulus, n, t in TRIALS:
        by_stimulus.setdefault(stimulus, []).append({"trial": n, "trajectory": {k: v for k, v in t.items()
                                                                                  if k != "stimulus"}})
    doc = {"outcomes": [{"stimulus": {"name": s}, "trials": trials} for s, trials in by_stimulus.items()]}
    (tmp_path / "outcome.json").write_text(json.dumps(doc))
    return tmp_path / "outcome.json"


def bare_trajectories(tmp_path: Path) -> Path | None:
    (tmp_path / "runs.jsonl").write_text(jsonl([{**t, "trial_index": n} for _, n, t in TRIALS]))
    return tmp_path / "runs.jsonl"


def beside_the_eval_file(tmp_path: Path) -> Path | None:
    write(tmp_path / "vally-results" / "2026-06-09T20-41-10-885Z" / "results.jsonl", jsonl(trial_results()))
    return None


LAYOUTS: list[tuple[Callable[[Path], Path | None], list[str]]] = [
    (run_dir, []),
    (output_dir, ["2 timestamped runs; grading the newest, 2026-06-09T20-41-10-885Z"]),
    (trajectory_files, []),
    (outcome_object, []),
    (bare_trajectories, []),
    (beside_the_eval_file, []),
]


def load(tmp_path: Path, results: Path | None, text: str = EVAL):
    (tmp_path / "eval.yaml").write_text(text)
    return load_suite(tmp_path / "eval.yaml", results=results, dialect=None, context=SpecContext())


def grade(suite) -> dict[str, tuple[str, dict[str, tuple[bool, float]]]]:
    out = {}
    for s in suite.samples:
        results = [grade_one(spec.build(default_resources()), s) for spec in suite.graders_for(s.id)]
        verdict = judge_sample(s.id, results, threshold=suite.threshold)
        out[s.id] = (verdict.status.value, {r.name: (r.passed, r.score) for r in results})
    return out


@pytest.mark.parametrize("layout, warnings", LAYOUTS, ids=[f.__name__ for f, _ in LAYOUTS])
def test_every_layout_grades_every_trial(tmp_path, layout, warnings):
    suite = load(tmp_path, layout(tmp_path))
    assert [s.id for s in suite.samples] == ["add-tests#1", "add-tests#2", "explain"]
    assert [s.output for s in suite.samples] == ["All TESTS PASS", "Tests failed: 1 of 3", "It explains the CLI."]
    assert grade(suite) == EXPECTED
    assert all(w in "\n".join(suite.warnings) for w in warnings) and len(suite.warnings) == len(warnings)
    if layout is run_dir:  # --out may never overwrite the run's files
        assert tmp_path / "results" / "2026-06-09T20-41-10-885Z" / "results.jsonl" in suite.inputs
    first = suite.samples[0]
    assert first.duration_ms == 1200 and first.metadata["model"] == "gpt-5.5" and first.metadata["turns"] == 1


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


GOOD = json.dumps(TRIALS[1][2])


@pytest.mark.parametrize("make, message, where", [
    # a record with neither events nor output is never graded as an empty output
    (lambda d: write(d / "r.jsonl", GOOD + "\n" + json.dumps({"stimulus": {"name": "explain"}, "final_output": "x"})),
     r"not a Vally trajectory or trial result.*keys: final_output, stimulus", "r.jsonl:2"),
    (lambda d: write(d / "r.jsonl", json.dumps({"stimulus": "explain", "trajectory": "run-c"}) + "\n"),
     "trajectory must be an object, got str", "r.jsonl:1"),
    (lambda d: write(d / "r.jsonl", json.dumps({"output": "x", "events": []}) + "\n"),
     "a trajectory needs stimulus.name naming its stimulus", "r.jsonl:1"),
    (lambda d: write(d / "r.jsonl", json.dumps({"stimulus": {"name": "explain"}, "output": "x", "events": "none"})),
     "a transcript must be a list of events", "r.jsonl:1"),
    (lambda d: write(d / "o.json", json.dumps({"outcomes": [{"stimulus": "explain", "trials": [{"trial": 1}]}]})),
     "not a Vally trajectory", "o.json[0].outcomes[0].trials[0]"),
    (lambda d: write(d / "o.json", json.dumps({"outcomes": [{"stimulus": "explain", "trials": [3]}]})),
     "a trial result must be an object, got int", "o.json[0].outcomes[0].trials[0]"),
    (lambda d: write(d / "o.json", json.dumps({"passRate": 1.0})),
     "not a Vally trajectory or trial result", "o.json[0]"),
    # an experiment's variants: which run is meant?
    (lambda d: (write(d / "x" / "baseline" / "results.jsonl", GOOD), write(d / "x" / "treatment" / "results.jsonl", GOOD),
                d / "x")[-1], r"2 runs here \(baseline, treatment\); point --results at one of them", "/x"),
    (lambda d: (write(d / "empty" / "report.md", "# nothing"), d / "empty")[-1], "no Vally run here", "/empty"),
])
def test_records_of_no_known_shape_are_errors_naming_file_and_position(tmp_path, make, message, where):
    with pytest.raises(SpecError, match=message) as exc:
        load(tmp_path, make(tmp_path))
    assert exc.value.where.endswith(where), exc.value.where


def test_a_folder_beside_the_eval_file_that_holds_no_run_is_passed_over(tmp_path):
    write(tmp_path / "vally-results" / "notes.txt", "not a run")
    write(tmp_path / "results" / "assay-out.jsonl", '{"id": "explain", "status": "passed"}\n')  # assay's --out
    write(tmp_path / "results.jsonl", '{"id": "explain", "status": "passed"}\n')
    text = EVAL.replace("    prompt: Explain the README.\n", "    prompt: Explain the README.\n    output: inline\n")
    suite = load(tmp_path, None, text)
    assert [s.id for s in suite.samples] == ["explain"] and suite.missing == ["add-tests"]
