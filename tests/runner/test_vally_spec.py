"""Vally eval specs as Vally accepts them: top-level ``tags`` and ``defaults`` inherited by every
stimulus, unnamed graders named after their type (several of one type in a stimulus), and
``scoring.weights`` keyed by type shared by every grader of that type
(microsoft.github.io/vally/reference/eval-spec/, guides/authoring-eval-suites/,
reference/cli/lint/)."""

from __future__ import annotations

import pytest

from assay.core.aggregate import judge_sample
from assay.core.context import SpecContext
from assay.core.errors import SpecError
from assay.runner.execute import grade_one
from assay.runner.resources import default_resources
from assay.runner.suites import load_suite

SPEC = """\
name: spec-shapes
tags: {area: auth, priority: p1}
defaults:
  tags: {cost: low}
  constraints: {max_turns: 10, max_tokens: 5000}
  rubric: ["Greets the user"]
  graders:
    - type: exit-success
    - type: output-contains
      config: {substring: hello}
stimuli:
  - name: login-basic
    prompt: Log in
    output: Hello there, logged in
    tags: {priority: p0}
    constraints: {max_turns: 3}
    graders:
      - type: output-contains
        config: {substring: logged}
      - type: output-contains
        config: {substring: goodbye}
      - type: output-not-contains
        config: {substring: error}
  - name: login-edge
    prompt: Expired token
    output: token expired
scoring:
  weights: {output-contains: 2, exit-success: 1}
  threshold: 0.8
"""


def load(tmp_path, text: str = SPEC):
    path = tmp_path / "eval.yaml"
    path.write_text(text)
    return load_suite(path, results=None, dialect=None, context=SpecContext())


def verdicts(suite):
    out = {}
    for s in suite.samples:
        results = [grade_one(spec.build(default_resources()), s) for spec in suite.graders_for(s.id)]
        out[s.id] = judge_sample(s.id, results, threshold=suite.threshold)
    return out


@pytest.mark.parametrize("stimulus, graders", [
    # defaults first, then the stimulus's own; a repeated type is numbered past the names taken
    ("login-basic", [("exit-success", "vally_session", 1.0), ("output-contains", "vally_output", 2.0),
                     ("output-contains#2", "vally_output", 2.0), ("output-contains#3", "vally_output", 2.0),
                     ("output-not-contains", "vally_output", 1.0)]),
    ("login-edge", [("exit-success", "vally_session", 1.0), ("output-contains", "vally_output", 2.0)]),
])
def test_defaults_graders_names_and_type_weights(tmp_path, stimulus, graders):
    suite = load(tmp_path)
    assert [(g.name, g.type, g.weight) for g in suite.sample_graders[stimulus]] == graders


@pytest.mark.parametrize("stimulus, tags, constraints", [
    ("login-basic", {"area": "auth", "priority": "p0", "cost": "low"}, {"max_turns": 3, "max_tokens": 5000}),
    ("login-edge", {"area": "auth", "priority": "p1", "cost": "low"}, {"max_turns": 10, "max_tokens": 5000}),
])
def test_tags_and_defaults_merge_key_by_key(tmp_path, stimulus, tags, constraints):
    sample = next(s for s in load(tmp_path).samples if s.id == stimulus)
    assert sample.metadata["tags"] == tags and sample.metadata["constraints"] == constraints


def test_defaults_rubric_fills_judge_prompt_unless_the_stimulus_has_one(tmp_path):
    text = SPEC.replace("    - type: exit-success\n", "    - type: prompt\n      config: {model: m}\n", 1)
    text = text.replace("  - name: login-edge\n", "  - name: login-edge\n    rubric: [Mentions the token]\n")
    suite = load(tmp_path, text.replace("exit-success: 1", "prompt: 1"))
    prompts = {sid: next(g for g in specs if g.name == "prompt").config.prompt
               for sid, specs in suite.sample_graders.items()}
    assert prompts == {"login-basic": "- Greets the user", "login-edge": "- Mentions the token"}


@pytest.mark.parametrize("threshold, basic, edge", [
    # login-basic: exit 1*1, hello 2*1, logged 2*1, goodbye 2*0, not-error 1*1 -> 6/8 = 0.75
    # login-edge: exit 1*1, hello 2*0 -> 1/3
    ("0.8", "failed", "failed"),
    ("0.75", "passed", "failed"),
    ("0.3", "passed", "passed"),
])
def test_weighted_verdicts(tmp_path, threshold, basic, edge):
    suite = load(tmp_path, SPEC.replace("threshold: 0.8", f"threshold: {threshold}"))
    got = verdicts(suite)
    assert got["login-basic"].score == pytest.approx(0.75) and got["login-edge"].score == pytest.approx(1 / 3)
    assert (got["login-basic"].status.value, got["login-edge"].status.value) == (basic, edge)


def test_without_threshold_every_grader_must_pass(tmp_path):
    got = verdicts(load(tmp_path, SPEC.replace("  threshold: 0.8\n", "")))
    assert {k: v.status.value for k, v in got.items()} == {"login-basic": "failed", "login-edge": "failed"}


@pytest.mark.parametrize("old, new, names", [
    # an explicit name is kept and auto names step past it
    ("        config: {substring: logged}\n", "        config: {substring: logged}\n        name: output-contains#2\n",
     ["exit-success", "output-contains", "output-contains#2", "output-contains#3", "output-not-contains"]),
    # a grader's own weight wins over the type's; a weight by name wins over the type's
    ("    - type: exit-success\n", "    - type: exit-success\n      weight: 5\n", None),
])
def test_names_and_weights_variants(tmp_path, old, new, names):
    suite = load(tmp_path, SPEC.replace(old, new))
    graders = suite.sample_graders["login-basic"]
    if names:
        assert [g.name for g in graders] == names
    else:
        assert graders[0].weight == 5.0 and graders[1].weight == 2.0


def test_weight_by_auto_name_wins_over_type(tmp_path):
    suite = load(tmp_path, SPEC.replace("{output-contains: 2,", "{output-contains: 2, output-contains#2: 4,"))
    assert [g.weight for g in suite.sample_graders["login-basic"]][1:4] == [2.0, 4.0, 2.0]


@pytest.mark.parametrize("old, new, message, where", [
    ("      config: {substring: hello}\n", "      config: {substring: hello}\n      name: same\n",
     r"duplicate grader name 'same' \(also defaults\.graders\[1\]\)", "eval.yaml:21"),
    ("{output-contains: 2, exit-success: 1}", "{output-contains: 2, file-exists: 1}",
     "scoring weight 'file-exists' names no grader", "eval.yaml:"),
])
def test_spec_errors_name_file_and_line(tmp_path, old, new, message, where):
    text = SPEC.replace(old, new)
    if "duplicate" in message:
        text = text.replace("        config: {substring: logged}\n", "        config: {substring: logged}\n        name: same\n")
    with pytest.raises(SpecError, match=message) as exc:
        load(tmp_path, text)
    assert where in exc.value.where, exc.value.where


# Vally's lint checks no unknown keys outside grader configs (reference/cli/lint/), so a spec
# passing `vally lint --strict` may hold them: each is ignored with one warning naming file,
# line and field. (line numbers are those of SPEC with the key inserted)
@pytest.mark.parametrize("old, new, warning", [
    ("name: spec-shapes\n", "name: spec-shapes\nowner: qa-team\n", "2: owner: unknown field 'owner' ignored"),
    ("    prompt: Log in\n", "    prompt: Log in\n    timeout: 5m\n",
     "14: stimuli[0].timeout: unknown field 'timeout' ignored"),
    ("  threshold: 0.8\n", "  threshold: 0.8\n  aggregate: mean\n",
     "30: scoring.aggregate: unknown field 'aggregate' ignored (known: weights, threshold)"),
    ('  rubric: ["Greets the user"]\n', '  rubric: ["Greets the user"]\n  rubrik: x\n',
     "7: defaults.rubrik: unknown field 'rubrik' ignored"),
    ("        config: {substring: logged}\n", "        config: {substring: logged}\n        description: checks login\n",
     "20: stimuli[0].graders[0].description: unknown field 'description' ignored "
     "(known: type, name, config, weight)"),
])
def test_unknown_keys_are_ignored_with_a_warning_naming_the_line(tmp_path, old, new, warning):
    suite = load(tmp_path, SPEC.replace(old, new, 1))
    assert suite.warnings[0].startswith(f"{tmp_path / 'eval.yaml'}:{warning}") and len(suite.warnings) == 1, \
        suite.warnings
    assert {k: v.status.value for k, v in verdicts(suite).items()} == {"login-basic": "failed", "login-edge": "failed"}


def test_an_unknown_key_on_a_default_grader_warns_once_for_every_stimulus(tmp_path):
    suite = load(tmp_path, SPEC.replace("    - type: exit-success\n", "    - type: exit-success\n      note: x\n", 1))
    assert [w.split(": ", 1)[1] for w in suite.warnings] == ["defaults.graders[0].note: unknown field 'note' ignored "
                                                            "(known: type, name, config, weight)"]
    assert suite.warnings[0].startswith(f"{tmp_path / 'eval.yaml'}:9:")
    assert [g.name for g in suite.sample_graders["login-edge"]] == ["exit-success", "output-contains"]


def test_an_unknown_key_inside_a_grader_config_stays_an_error(tmp_path):
    """Vally's lint: invalid-grader-config (unknown config keys), run again before vally eval."""
    text = SPEC.replace("config: {substring: logged}", "config: {substring: logged, case_sensitiv: true}")
    with pytest.raises(SpecError, match="case_sensitiv") as exc:
        load(tmp_path, text)
    assert exc.value.where.endswith("eval.yaml:19"), exc.value.where
