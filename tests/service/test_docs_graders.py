"""docs/concepts/custom-graders.md, followed literally: its example module is written out, imported, and then
the grader is registered, listed, graded through the library, used in a suite, and accepted
by the API inside a composite evaluator, as the page says, with no other file touched."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

import assay
from assay.core import registry
from assay.runner.local_engine.run import run_suite
from assay.runner.suites import load_suite

DOC = Path(__file__).parents[2] / "docs" / "concepts" / "custom-graders.md"


@pytest.fixture
def word_count(tmp_path, monkeypatch):
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    module_source, usage = blocks[0], blocks[1]
    path = tmp_path / "word_count_doc_example.py"
    path.write_text(module_source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, path.stem, module)
    spec.loader.exec_module(module)  # @register adds it
    yield module, usage
    registry._registry.pop("word_count", None)


def test_the_example_is_registered_listed_and_graded(word_count):
    module, usage = word_count
    assert registry.get("word_count") is module.WordCount
    assert "word_count" in registry.all_graders()
    # the page's own usage, a doctest (tests/docs runs it as one): its lines after ">>> ", and the
    # output it shows
    code = [line[4:] for line in usage.splitlines() if line.startswith(">>> ")]
    shown = [line for line in usage.splitlines() if line.strip() and not line.startswith((">>> ", "... "))]
    namespace: dict = {}
    exec("\n".join(code[:-1]), namespace)
    assert repr(eval(code[-1], namespace)) == shown[-1] == "True"  # the line ends in .passed
    too_long = assay.grade({"type": "word_count", "config": {"max_words": 1}}, {"output": "two words"})
    assert not too_long.passed and too_long.reason == "2 words, more than 1"
    with pytest.raises(assay.SpecError, match="config: .*min_words is greater than max_words"):
        assay.grade({"type": "word_count", "config": {"min_words": 3, "max_words": 1}}, {"output": ""})


def test_the_example_runs_in_a_suite(word_count, tmp_path):
    (tmp_path / "data.jsonl").write_text('{"id": "a", "output": "one two"}\n{"id": "b", "output": "one two three"}\n')
    (tmp_path / "eval.yaml").write_text("name: words\ndataset: data.jsonl\n"
                                        "graders:\n  - {type: word_count, config: {max_words: 2}}\n")
    result = run_suite(load_suite(tmp_path / "eval.yaml"))
    assert [(v.id, v.passed) for v in result.verdicts] == [("a", True), ("b", False)]


def test_the_example_is_accepted_by_the_api_and_offered_a_form(word_count, sqlite_api):
    composite = {"graders": [{"type": "word_count", "config": {"max_words": 2}}, {"type": "contains"}]}
    created = sqlite_api.call("POST", "/evaluators", json={"name": "short", "type": "composite", "config": composite})
    assert created.status_code == 200, created.text
    tested = sqlite_api.call("POST", f"/evaluators/{created.json()['data']['id']}/test",
                             json={"input": "q", "output": "three words here", "expected": "words"})
    assert tested.status_code == 200 and tested.json()["data"]["passed"] is False, tested.text
    schemas = sqlite_api.client.get("/pages/api/schemas", headers=sqlite_api.as_("alice")).json()["data"]
    assert "max_words" in schemas["word_count"]["properties"]
