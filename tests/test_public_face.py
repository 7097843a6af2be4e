"""What a plugin author imports: the traits and taxonomy a grader declares, the fakes to test it
with (``assay.testing``), and type information (``py.typed``)."""

from __future__ import annotations

from pathlib import Path

import assay
import assay.testing
from assay.core.interfaces import Resources
from assay.core.sample import Sample
from assay.core.spec import compile_spec


def test_traits_and_taxonomy_are_public():
    from assay.core.grader import Taxonomy, Traits

    assert {"Traits", "Taxonomy"} <= set(assay.__all__)
    assert (assay.Traits, assay.Taxonomy) == (Traits, Taxonomy)


def test_the_fakes_ship_and_record_calls():
    assert set(assay.testing.__all__) == {"FakeCodeRunner", "FakeJudgeClient", "FakeProcessRunner"}
    runner = assay.testing.FakeProcessRunner()
    spec = compile_spec({"type": "program", "config": {"program": "my-grader"}})
    assert spec.build(Resources(process_runner=runner)).grade(Sample(id="s", workspace="/")).passed
    assert runner.calls[0].argv == ["my-grader"]


def test_the_package_is_typed():
    assert (Path(assay.__file__).parent / "py.typed").is_file()
