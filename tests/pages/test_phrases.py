"""Every message the product writes under a code (``core.messages``: the graders' and the
sandbox's reasons, the API's errors, validation problems) has its ``phrase.<code>`` in every
catalogue, with the same placeholders; the list comes from the code itself (every module of
the layers that say phrases, imported), never from a list kept here. And the phrases are
really used: the presets' failures and the sandbox's errors carry their code, user code's own
reasons carry none."""

from __future__ import annotations

import importlib
import pkgutil

import pytest

import assay
from assay.core.messages import phrases, placeholders
from assay.server.pages.i18n import LANGUAGES, catalogue

LAYERS = ("core", "graders", "judges", "runner", "sandbox", "server", "service")


def every_phrase() -> dict[str, object]:
    """Import every module of the layers that say phrases, then read the registry."""
    for layer in LAYERS:
        package = importlib.import_module(f"assay.{layer}")
        for info in pkgutil.walk_packages(package.__path__, f"{package.__name__}."):
            importlib.import_module(info.name)
    return phrases()


def test_the_scan_finds_the_phrases_of_every_layer():
    codes = every_phrase()
    for prefix in ("regex.", "json_schema.", "similarity.", "contains.", "exact_match.", "code.", "sandbox.",
                   "api.", "problem.", "judge.call."):
        assert any(code.startswith(prefix) for code in codes), prefix


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_phrase_has_a_message_with_its_placeholders(lang):
    messages = catalogue(lang)
    missing, wrong = [], []
    for code, phrase in every_phrase().items():
        text = messages.get(f"phrase.{code}")
        if not text:
            missing.append(code)
        elif placeholders(text) != phrase.names:
            wrong.append((code, text))
    assert not missing, f"phrases.{lang}.json lacks {missing}"
    assert not wrong, f"phrases.{lang}.json: placeholders differ from the code's: {wrong}"


def test_the_english_catalogue_says_what_the_code_says():
    en = catalogue("en")
    stale = {code: (phrase.text, en.get(f"phrase.{code}")) for code, phrase in every_phrase().items()
             if en.get(f"phrase.{code}") != phrase.text}
    assert not stale, stale


@pytest.mark.parametrize("lang", LANGUAGES)
def test_no_catalogue_keeps_a_phrase_the_code_no_longer_says(lang):
    codes = set(every_phrase())
    kept = {key.removeprefix("phrase.") for key in catalogue(lang) if key.startswith("phrase.")}
    assert kept - codes == {"separator"}


FAILURES = [  # (spec, sample): a preset that fails, or cannot grade, for a reason of its own
    ({"type": "exact_match"}, {"output": "abc", "expected": "abd"}),
    ({"type": "exact_match"}, {"output": 42, "expected": "42"}),
    ({"type": "contains"}, {"output": "abc", "expected": "x"}),
    ({"type": "contains"}, {"output": {"a": 1}, "expected": "b"}),
    ({"type": "regex", "config": {"pattern": "^\\d+$"}}, {"output": "abc"}),
    ({"type": "regex", "config": {"must_match": ["a"], "must_not_match": ["b"]}}, {"output": "b"}),
    ({"type": "json_schema", "config": {"schema": {"type": "object"}}}, {"output": "not json"}),
    ({"type": "json_schema", "config": {"schema": {"type": "object", "required": ["a"]}}}, {"output": "{}"}),
    ({"type": "similarity", "config": {"threshold": 0.9}}, {"output": "abc", "expected": "xyz"}),
]


@pytest.mark.parametrize(("spec", "sample"), FAILURES)
def test_a_preset_failure_carries_its_phrase(spec, sample):
    result = assay.grade(spec, sample)
    assert result.status in ("failed", "error")
    assert result.reason_code in every_phrase(), result
    for lang in LANGUAGES:
        assert catalogue(lang).get(f"phrase.{result.reason_code}")


def _code(source: str, language: str = "python", timeout: int = 300) -> dict[str, object]:
    return {"type": "code", "config": {"language": language, "code": source, "timeout": timeout}}


def test_a_sandbox_timeout_carries_its_phrase_and_user_reasons_none():
    spinning = "def evaluate(input, output, expected, metadata):\n    while True:\n        pass\n"
    result = assay.grade(_code(spinning), {"output": "x"})
    assert (result.status, result.error, result.reason_code) == ("error", "timeout", "sandbox.timeout_doing")
    assert result.reason_args == {"ms": 300, "doing": {"code": "sandbox.doing.running", "args": {}}}
    assert result.reason.startswith("the evaluator was still running when its 300 ms ran out")
    own = "def evaluate(input, output, expected, metadata):\n    return {'passed': False, 'reason': '太短'}\n"
    result = assay.grade(_code(own), {"output": "x"})
    assert (result.reason, result.reason_code, result.reason_args) == ("太短", None, None)


def test_a_node_timeout_carries_the_phrase_the_worker_named():
    source = "module.exports = async function () { while (true) {} };"
    result = assay.grade(_code(source, "nodejs"), {"output": "x"})
    if result.error == "unavailable":
        pytest.skip(result.reason)
    assert (result.error, result.reason_code) == ("timeout", "sandbox.node_running"), result
    assert result.reason == "the evaluation was still running (its code had the isolate) when its 300 ms ran out"
