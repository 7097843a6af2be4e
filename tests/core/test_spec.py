import pytest

import assay
from assay.core import registry
from assay.core.errors import SpecError
from assay.core.grader import Grader, GraderConfig
from assay.core.spec import compile_spec


def test_name_defaults_to_type_and_weight_to_one():
    c = compile_spec({"type": "contains"})
    assert (c.name, c.weight) == ("contains", 1.0)


@pytest.mark.parametrize("spec, message", [
    ({"type": "exact"}, r"type: unknown grader type 'exact' \(did you mean 'exact_match'\?\)"),
    ({"type": "contains", "weight": -1}, r"weight: Input should be greater than or equal to 0"),
    ({"type": "contains", "configs": {}}, r"configs: unknown field"),
    ({"name": "x"}, r"type: Field required"),
    ("contains", r"must be a mapping"),
])
def test_invalid_specs(spec, message):
    with pytest.raises(SpecError, match=message):
        compile_spec(spec, path="graders[0]" if isinstance(spec, str) else "")


def test_error_path_is_prefixed():
    with pytest.raises(SpecError) as info:
        compile_spec({"type": "similarity", "config": {"threshold": 3}}, path="graders[2]")
    assert str(info.value).startswith("graders[2].config.threshold:")


def test_library_grade_and_batch():
    r = assay.grade({"type": "contains"}, {"output": "北京是中国的首都，有着悠久的历史", "expected": "首都"})
    assert (r.status, r.passed, r.score, r.error) == ("passed", True, 1.0, None)
    assert r.latency_ms > 0
    rs = assay.grade_batch({"type": "exact_match", "name": "em", "weight": 2},
                           [{"output": "a", "expected": "a"}, {"output": "a", "expected": "b"}])
    assert [r.passed for r in rs] == [True, False]
    assert {r.name for r in rs} == {"em"} and {r.weight for r in rs} == {2.0}


def test_grade_rejects_bad_sample():
    with pytest.raises(SpecError, match="sample 'x'.*metadata"):
        assay.grade({"type": "contains"}, {"id": "x", "output": "a", "metadata": "not an object"})


def test_registry_plugin_and_runner_turns_exceptions_into_errors():
    class BoomConfig(GraderConfig):
        pass

    @registry.register
    class Boom(Grader[BoomConfig]):
        type = "test_boom"
        description = "raises"

        def grade(self, sample):
            raise RuntimeError("kaput")

    r = assay.grade({"type": "test_boom"}, {"output": "x"})
    assert r.status == "error" and r.error == "runtime_error" and "kaput" in r.reason
    assert "test_boom" in registry.all_graders()


def test_results_serialise():
    r = assay.grade({"type": "regex", "config": {"pattern": "首都"}}, {"output": "北京是中国的首都"})
    data = r.model_dump(mode="json")
    assert data["status"] == "passed" and data["details"]["span"] == [6, 8]
    assert assay.GraderResult.model_validate(data) == r
