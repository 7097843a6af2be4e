"""``composite``: child specs compiled at validation (errors name the child's field), the three
rules, errors and pending children reported and never folded into failures, batching, nesting."""

import json

import pytest

from assay.core.errors import SpecError
from assay.core.interfaces import Resources
from assay.core.judge import JudgeReply
from assay.core.result import ErrorCode
from assay.core.sample import Sample
from assay.core.spec import compile_spec
from assay.graders.composite import MAX_DEPTH

PASS = {"type": "contains", "name": "pass"}  # expected "x" is in output "x y"
PASS2 = {"type": "regex", "name": "pass2", "config": {"pattern": "x"}}
FAIL = {"type": "regex", "name": "fail", "config": {"pattern": "^nope$"}}
PENDING = {"type": "human", "name": "person"}
ERROR = {"type": "llm", "name": "judge", "config": {"rubric": "r"}}  # no judge client: unavailable


def composite(children, rule="all", **config):
    return {"type": "composite", "name": "combo", "config": {"graders": children, "rule": rule, **config}}


def grade(spec, resources=None, output="x y"):
    return compile_spec(spec).build(resources).grade(Sample(id="s", output=output, expected="x"))


def judge_replies(*scores):
    """A fake judge that answers each request with the next 1-5 score (the last repeats)."""
    from assay.testing import FakeJudgeClient

    return FakeJudgeClient([JudgeReply(text=json.dumps({"reasoning": "r", "score": s})) for s in scores])


@pytest.mark.parametrize("rule, children, status, error", [
    ("all", [PASS, PASS2], "passed", None),
    ("all", [PASS, FAIL], "failed", None),
    ("all", [PASS, ERROR], "error", "unavailable"),  # an error is not a failure
    ("all", [FAIL, ERROR], "failed", None),  # a real failure decides
    ("all", [PASS, PENDING], "pending", None),
    ("all", [ERROR, PENDING], "error", "unavailable"),
    ("any", [FAIL, PASS], "passed", None),
    ("any", [FAIL, FAIL | {"name": "fail2"}], "failed", None),
    ("any", [FAIL, ERROR], "error", "unavailable"),  # might have passed: not a failure
    ("any", [FAIL, PENDING], "pending", None),
    ("any", [ERROR, PASS], "passed", None),
])
def test_all_and_any(rule, children, status, error):
    r = grade(composite(children, rule))
    assert (r.status.value, r.error.value if r.error else None) == (status, error)
    assert [c["name"] for c in r.details["children"]] == [c["name"] for c in children]
    assert r.passed == (status == "passed")
    if status in ("error", "pending"):
        assert r.score is None


def test_children_are_reported_with_status_score_reason_and_error():
    r = grade(composite([PASS, FAIL, ERROR, PENDING]))
    rows = {c["name"]: c for c in r.details["children"]}
    assert rows["pass"] == {"name": "pass", "type": "contains", "status": "passed", "score": 1.0, "reason": None,
                            "error": None, "weight": 1.0}
    assert rows["fail"]["status"] == "failed" and rows["fail"]["reason"]
    assert rows["judge"]["status"] == "error" and rows["judge"]["error"] == "unavailable"
    assert rows["person"]["status"] == "pending"
    assert r.status.value == "failed" and r.reason == "failed: fail"


@pytest.mark.parametrize("children, threshold, status, score", [
    ([PASS | {"weight": 3}, FAIL], 0.5, "passed", 0.75),
    ([PASS, FAIL | {"weight": 3}], 0.5, "failed", 0.25),
    ([PASS, FAIL], 0.5, "passed", 0.5),  # the threshold is inclusive
    ([PASS, FAIL], 0.6, "failed", 0.5),
    ([FAIL, ERROR | {"weight": 100}], 0.5, "failed", 0.0),  # the error is left out, not a 0
    ([PASS, ERROR | {"weight": 100}], 0.5, "passed", 1.0),
])
def test_weighted_mean_of_scored_children(children, threshold, status, score):
    r = grade(composite(children, "weighted", threshold=threshold))
    assert (r.status.value, r.score) == (status, pytest.approx(score))
    assert r.details["scored"] == sum(1 for c in children if c is not ERROR and c.get("name") != "judge")


def test_weighted_counts_left_out_children():
    r = grade(composite([PASS, ERROR, PENDING], "weighted"))
    assert r.status.value == "passed"
    assert (r.details["scored"], r.details["errors"], r.details["pending"]) == (1, 1, 1)


def test_weighted_with_nothing_scored_is_an_error_or_pending():
    r = grade(composite([ERROR, PENDING], "weighted"))
    assert r.status.value == "error" and r.error is ErrorCode.UNAVAILABLE and "no child scored" in r.reason
    assert grade(composite([PENDING], "weighted")).status.value == "pending"


def test_weighted_uses_judge_scores(fake_judge):
    # judge_a scores 5 (1.0) with weight 1, judge_b scores 2 (0.25) with weight 3: mean 0.4375
    a = {"type": "llm", "name": "a", "config": {"rubric": "r"}}
    b = {"type": "llm", "name": "b", "weight": 3, "config": {"rubric": "r"}}
    replies = {"a": 5, "b": 2}

    def respond(request):
        who = "a" if "alpha" in request.messages[1].content else "b"
        return JudgeReply(text=json.dumps({"reasoning": who, "score": replies[who]}))

    a["config"]["rubric"], b["config"]["rubric"] = "alpha", "beta"
    r = grade(composite([a, b], "weighted", threshold=0.4), Resources(judge_client=fake_judge(respond)))
    assert r.status.value == "passed" and r.score == pytest.approx(0.4375)
    assert r.kind == "llm"


def test_a_judge_child_sends_one_batch(fake_judge):
    fake = fake_judge()
    calls = []
    many = fake.judge_many
    fake.judge_many = lambda requests: calls.append(len(requests)) or many(requests)
    spec = composite([PASS, {"type": "llm", "name": "j", "config": {"rubric": "r"}}])
    grader = compile_spec(spec).build(Resources(judge_client=fake))
    results = grader.grade_batch([Sample(id=str(i), output="x", expected="x") for i in range(4)])
    assert calls == [4]  # one judge_many for the whole batch, not one per sample
    assert [r.status.value for r in results] == ["passed"] * 4


def test_children_share_the_composite_resources(fake_judge):
    resources = Resources(judge_client=fake_judge())
    grader = compile_spec(composite([{"type": "llm", "config": {"rubric": "r"}}])).build(resources)
    assert grader.children[0].resources is resources


def test_a_child_that_raises_becomes_its_runtime_error():
    spec = composite([PASS, FAIL], "any")
    grader = compile_spec(spec).build()

    def boom(sample):
        raise RuntimeError("kaput")

    grader.children[1].grade = boom
    grader.children[1].grade_batch = lambda samples: [boom(s) for s in samples]
    r = grader.grade(Sample(id="s", output="x", expected="x"))
    assert r.status.value == "passed"
    row = r.details["children"][1]
    assert row["status"] == "error" and row["error"] == "runtime_error" and "kaput" in row["reason"]


def test_nested_composites():
    inner = composite([FAIL, PASS], "any") | {"name": "inner"}
    r = grade(composite([PASS, inner]))
    assert r.status.value == "passed"
    assert r.details["children"][1]["children"][0]["name"] == "fail"


def test_nesting_is_bounded():
    spec = PASS
    for level in range(MAX_DEPTH):
        spec = composite([spec]) | {"name": f"c{level}"}
    compile_spec(spec)  # MAX_DEPTH levels are fine
    with pytest.raises(SpecError, match=f"at most {MAX_DEPTH} levels"):
        compile_spec(composite([spec]))
    deep = PASS
    for level in range(2000):  # refused before compiling, without recursion
        deep = composite([deep]) | {"name": f"c{level}"}
    with pytest.raises(SpecError, match="nest"):
        compile_spec(deep)


@pytest.mark.parametrize("config, path", [
    ({"graders": [PASS, {"type": "regex", "config": {"pattern": "("}}]}, "config.graders[1].config.pattern"),
    ({"graders": [PASS, {"type": "regexx"}]}, "config.graders[1].type"),
    ({"graders": [PASS, PASS]}, "config.graders[1].name"),
    ({"graders": [composite([{"type": "regex", "config": {"patern": "a"}}])]},
     "config.graders[0].config.graders[0].config.patern"),
    ({"graders": []}, "config.graders"),
    ({"graders": [PASS], "rule": "most"}, "config.rule"),
    ({"graders": [PASS], "rule": "weighted", "threshold": 2}, "config.threshold"),
])
def test_bad_children_name_their_field(config, path):
    with pytest.raises(SpecError) as info:
        compile_spec({"type": "composite", "config": config})
    assert str(info.value).startswith(path + ":")


def test_children_are_validated_under_the_same_context(tmp_path):
    from assay.core.context import SpecContext

    (tmp_path / "rubric.md").write_text("Be right.")
    spec = composite([{"type": "llm", "config": {"rubric_file": "rubric.md"}}])
    compiled = compile_spec(spec, context=SpecContext(base_dir=tmp_path))
    assert compiled.config.children[0].config.criteria == "Be right."
    with pytest.raises(SpecError, match=r"config.graders\[0\].config: .*rubric_file"):
        compile_spec(spec)  # without the suite's folder the file is not found


def test_taxonomy_and_kind_follow_the_costliest_child():
    plain = compile_spec(composite([PASS, FAIL])).build()
    assert plain.taxonomy.cost == "free" and plain.kind == "code"
    judged = compile_spec(composite([PASS, ERROR])).build()
    assert judged.taxonomy.cost == "high" and judged.kind == "llm"
    assert compile_spec(composite([ERROR, PENDING])).build().kind == "human"
