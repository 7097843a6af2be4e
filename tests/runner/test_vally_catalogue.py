"""A Vally eval spec in its real shape using every catalogue grader this dialect maps onto
assay's ``vally_*`` graders, graded against a Vally trajectory file (events with ``data``,
turn markers, skill activations, token usage, ``metrics``, ``workDir``). Expected verdicts
follow Vally's grader reference pages (microsoft.github.io/vally/reference/graders/)."""

from __future__ import annotations

import json

import pytest

from assay.core.aggregate import judge_sample
from assay.core.context import SpecContext
from assay.core.errors import SpecError
from assay.runner.execute import grade_one
from assay.runner.resources import default_resources
from assay.runner.suites import load_suite

EVAL = """\
name: catalogue
stimuli:
  - name: write-tests
    prompt: Write unit tests for add.
    graders:
      - type: completed
      - type: exit-success
      - type: output-contains
        config: {substring: "ALL TESTS PASS"}
      - {type: output-contains, name: exact-case, config: {substring: "ALL TESTS PASS", case_sensitive: true}}
      - type: output-not-contains
        config: {substring: "error"}
      - type: output-matches
        config: {pattern: "(?i)^all tests pass"}
      - type: output-not-matches
        config: {pattern: "(?m)^FAIL"}
      - type: file-exists
        config: {path: "*.test.js"}
      - type: file-not-exists
        config: {path: "*.tmp"}
      - type: file-contains
        config: {path: "add.test.js", value: "expect"}
      - type: file-not-contains
        config: {path: "**/*.js", value: "console.log"}
      - type: file-matches
        config: {path: "add.test.js", pattern: "toBe\\\\(3\\\\)"}
      - type: file-not-matches
        config: {path: "add.test.js", pattern: "(?i)TODO"}
      - type: token-budget
        config: {max: 1000}
      - type: tool-call-count
        config: {max: 2}
      - type: turn-count
        config: {max: 2}
      - type: error-count
        config: {max: 0}
      - type: wall-time
        config: {max: "2m"}
      - type: run-command
        config: {command: "test -f add.test.js && echo OK", stdout_contains: "OK"}
      - type: tool-calls
        config:
          required:
            - create
            - {name: bash, command: "npm test", final: true, at_step: 1}
          disallowed: [{name: view, path: "secret\\\\.env$"}]
          sequence: [create, bash]
      - type: skill-invocation
        config: {required: [code-review], disallowed: [web-search]}
      - type: transcript-contains
        config: {substring: "creating the TESTS"}
      - type: transcript-not-contains
        config: {substring: "rm -rf"}
      - type: transcript-matches
        config: {pattern: "^All tests"}
      - type: transcript-not-matches
        config: {pattern: "(?i)creating"}
"""


def ev(kind, **data):
    return {"type": kind, "timestamp": "2025-01-15T10:30:00.000Z", "data": data}


TRAJECTORY = {
    "id": "run-1", "stimulus": {"name": "write-tests"}, "output": "All tests pass (3/3).", "workDir": "ws",
    "metrics": {"wallTimeMs": 150000},
    "events": [
        ev("turn_start", turnId="turn-1"), ev("skill_activation", skillName="code-review"),
        ev("assistant_message", content="Creating the tests."),
        ev("tool_call", toolName="create", toolCallId="c1", arguments={"path": "add.test.js"}),
        ev("tool_result", toolCallId="c1", success=True, result="written"),
        ev("token_usage", inputTokens=900, outputTokens=600), ev("turn_end", turnId="turn-1"),
        ev("turn_start", turnId="turn-2"),
        ev("tool_call", toolName="bash", toolCallId="c2", arguments={"command": "npm test"}),
        ev("tool_result", toolCallId="c2", success=True, result="3 passing"),
        ev("assistant_message", content="All tests pass (3/3)."), ev("turn_end", turnId="turn-2"),
    ],
}

EXPECTED = {  # name -> (passed, score) from Vally's reference pages
    "completed": (True, 1.0), "exit-success": (True, 1.0), "output-contains": (True, 1.0),
    "exact-case": (False, 0.0), "output-not-contains": (True, 1.0), "output-matches": (True, 1.0),
    "output-not-matches": (True, 1.0), "file-exists": (True, 1.0), "file-not-exists": (True, 1.0),
    "file-contains": (True, 1.0), "file-not-contains": (True, 1.0), "file-matches": (True, 1.0),
    "file-not-matches": (True, 1.0),
    "token-budget": (False, 0.5),          # 1500 tokens against 1000: 1 - 500/1000
    "tool-call-count": (True, 1.0), "turn-count": (True, 1.0), "error-count": (True, 1.0),
    "wall-time": (False, 0.75),            # 150s against 2m
    "run-command": (True, 1.0), "tool-calls": (True, 1.0), "skill-invocation": (True, 1.0),
    "transcript-contains": (True, 1.0), "transcript-not-contains": (True, 1.0),  # an interim message counts
    "transcript-matches": (True, 1.0), "transcript-not-matches": (False, 0.0),
}


def write(tmp_path, eval_text=EVAL, trajectory=TRAJECTORY):
    (tmp_path / "eval.yaml").write_text(eval_text)
    (tmp_path / "trajectories.jsonl").write_text(json.dumps(trajectory) + "\n")
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    (ws / "add.test.js").write_text("test('adds', () => expect(add(1, 2)).toBe(3));\n")
    return tmp_path / "eval.yaml"


def test_every_catalogue_type_through_the_vally_dialect(tmp_path):
    suite = load_suite(write(tmp_path), results=None, dialect=None, context=SpecContext())
    assert suite.dialect == "vally" and [s.id for s in suite.samples] == ["write-tests"]
    sample = suite.samples[0]
    assert sample.metadata["turns"] == 2 and sample.metadata["skills"] == ["code-review"]
    assert sample.metadata["tool_steps"] == [0, 1] and sample.duration_ms == 150000
    results = [grade_one(spec.build(default_resources()), sample) for spec in suite.graders_for(sample.id)]
    got = {r.name: (r.passed, r.score) for r in results}
    assert got == EXPECTED, {k: (v, next(r.reason for r in results if r.name == k))
                             for k, v in got.items() if v != EXPECTED.get(k)}
    assert judge_sample(sample.id, results, threshold=None).status.value == "failed"


def test_completed_needs_a_turn_end(tmp_path):
    events = [e for e in TRAJECTORY["events"] if e["type"] != "turn_end"]
    suite = load_suite(write(tmp_path, "stimuli:\n  - name: write-tests\n    graders:\n      - type: completed\n",
                             {**TRAJECTORY, "events": events}), results=None, dialect=None, context=SpecContext())
    result = grade_one(suite.graders_for("write-tests")[0].build(default_resources()), suite.samples[0])
    assert not result.passed and "no completed turn" in result.reason


@pytest.mark.parametrize("grader, message", [
    ("{type: output-contains, config: {substring: a, mode: matches}}", "unknown field for output-contains: mode"),
    ("{type: file-exists, config: {path: ../x}}", "'..' segment"),
    ("{type: token-budget, config: {max: '5'}}", "non-negative integer"),
    ("{type: tool-calls, config: {sequence: [{name: a, result: b}]}}", "result is not supported"),
])
def test_bad_catalogue_configs_name_the_line(tmp_path, grader, message):
    path = write(tmp_path, f"stimuli:\n  - name: write-tests\n    graders:\n      - {grader}\n")
    with pytest.raises(SpecError, match=message) as err:
        load_suite(path, results=None, dialect=None, context=SpecContext())
    assert "eval.yaml:4" in str(err.value)


@pytest.mark.parametrize("kind", ["diff-contains", "diff-not-contains", "diff-empty"])
def test_diff_graders_are_refused_by_name_saying_why(tmp_path, kind):
    text = f"stimuli:\n  - name: write-tests\n    graders:\n      - type: {kind}\n"
    with pytest.raises(SpecError, match=f"Vally's {kind} grader reads the workspace diff") as exc:
        load_suite(write(tmp_path, text), results=None, dialect=None, context=SpecContext())
    assert exc.value.where.endswith("eval.yaml:4")
