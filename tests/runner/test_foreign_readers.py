"""The readers of runs other tools wrote (runner.foreign), called directly: how promptfoo's tests
become sample ids, how Inspect's score values become grades, and that detection goes by content.
The end-to-end answers are in tests/cli/test_compare_foreign.py."""

from __future__ import annotations

import copy
import importlib.util
import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from assay.core.errors import SpecError
from assay.core.result import ErrorCode, Status
from assay.runner.foreign import inspect_log, promptfoo, read_foreign
from assay.runner.reviews import load_verdicts

RUNS = Path(__file__).resolve().parents[1] / "peers" / "foreign" / "runs"


def promptfoo_doc() -> dict[str, Any]:
    return json.loads((RUNS / "promptfoo_a.json").read_text())


def rows_of(doc: dict[str, Any]) -> list[dict[str, Any]]:
    return doc["results"]["results"]


def test_a_repeated_promptfoo_test_is_attempts_of_one_task() -> None:
    doc = promptfoo_doc()
    rows = rows_of(doc)
    again = copy.deepcopy(next(r for r in rows if r["testCase"].get("description") == "capital of Japan"))
    again["success"], again["failureReason"] = False, 1
    again["gradingResult"]["componentResults"][1].update({"pass": False, "score": 0})
    rows.append(again)
    got = {v.id: v for v in promptfoo.verdicts(doc, "x.json")}
    assert {"capital of Japan#r1", "capital of Japan#r2"} <= set(got)
    assert "capital of Japan" not in got
    assert got["capital of Japan#r1"].cluster == got["capital of Japan#r2"].cluster == "capital of Japan"
    assert got["capital of Japan#r2"].status is Status.FAILED
    assert got["capital of France"].cluster is None


def test_several_prompts_or_providers_make_each_column_its_own_sample() -> None:
    doc = promptfoo_doc()
    rows = rows_of(doc)
    other = copy.deepcopy(rows[0])
    other["provider"] = {"id": "openai:gpt-x", "label": ""}
    rows.append(other)
    ids = [v.id for v in promptfoo.verdicts(doc, "x.json")]
    assert len(ids) == len(set(ids)) == 13
    assert f"openai:gpt-x / Answer briefly: {{{{question}}}} / {_key(rows[0])}" in ids
    assert f"fixture / Answer briefly: {{{{question}}}} / {_key(rows[0])}" in ids


def _key(row: dict[str, Any]) -> str:
    return row["testCase"].get("description") or "vars:?"


def test_one_description_over_different_vars_keeps_tests_apart_by_their_vars() -> None:
    doc = promptfoo_doc()
    for row in rows_of(doc)[:2]:
        row["testCase"]["description"] = "same words"
    ids = [v.id for v in promptfoo.verdicts(doc, "x.json")]
    twins = [i for i in ids if i.startswith("same words [")]
    assert len(twins) == 2 and len(set(ids)) == 12


def test_runtime_vars_do_not_change_a_tests_identity() -> None:
    doc = promptfoo_doc()
    plain = [v.id for v in promptfoo.verdicts(copy.deepcopy(doc), "x.json")]
    for row in rows_of(doc):
        row["testCase"]["vars"] = row["testCase"]["vars"] | {"_conversation": [1], "sessionId": "s-42"}
    assert [v.id for v in promptfoo.verdicts(doc, "x.json")] == plain


def test_promptfoo_grader_names_weights_and_out_of_range_scores() -> None:
    doc = promptfoo_doc()
    row = next(r for r in rows_of(doc) if r["testCase"].get("description") == "JSON greeting")
    row["gradingResult"]["componentResults"].append(
        {"pass": True, "score": 3, "reason": "ok", "assertion": {"type": "contains", "value": "h", "weight": 2}})
    row["gradingResult"]["componentResults"].append(
        {"pass": False, "score": 0, "reason": "judge said no", "assertion": {"type": "llm-rubric", "value": "polite"}})
    verdict = next(v for v in promptfoo.verdicts(doc, "x.json") if v.id == "JSON greeting")
    results = {r.name: r for r in verdict.results}
    assert list(results) == ["javascript:brevity", "is-json", "contains", "contains#2", "llm-rubric"]
    assert results["contains#2"].weight == 2 and results["contains#2"].score == 1.0
    assert results["contains#2"].details["peer_score"] == 3
    assert results["llm-rubric"].kind == "llm" and results["is-json"].kind == "code"


def test_a_provider_error_makes_each_assertion_an_error_not_a_failure() -> None:
    verdicts = {v.id: v for v in load_verdicts(RUNS / "promptfoo_b.json")}
    errored = verdicts["reverse a word"]
    assert errored.status is Status.ERROR and errored.score is None
    assert [r.status for r in errored.results] == [Status.ERROR, Status.ERROR]
    assert all(r.error is ErrorCode.RUNTIME_ERROR and "simulated upstream 503" in (r.reason or "")
               for r in errored.results)


@pytest.mark.parametrize(("value", "passed", "score"), [
    ("C", True, 1.0), ("I", False, 0.0), ("P", False, 0.5), ("N", False, 0.0), (True, True, 1.0),
    (False, False, 0.0), ("yes", True, 1.0), ("No", False, 0.0), (0.25, False, 0.25), (1, True, 1.0), ("0.5", False, 0.5),
])
def test_inspect_values_read_as_inspect_reads_them(value: Any, passed: bool, score: float) -> None:
    [verdict] = inspect_log.verdicts({"eval": {"task": "t"}}, [{"id": 1, "scores": {"s": {"value": value}}}], "x")
    [result] = verdict.results
    assert (result.status is Status.PASSED, result.passed, result.score) == (passed, passed, score)


@pytest.mark.parametrize("value", [7, -1, "maybe", [1, 0], None])
def test_an_inspect_value_assay_cannot_read_is_an_invalid_output_error(value: Any) -> None:
    [verdict] = inspect_log.verdicts({"eval": {"task": "t"}}, [{"id": "a", "scores": {"s": {"value": value}}}], "x")
    [result] = verdict.results
    assert result.status is Status.ERROR and result.error is ErrorCode.INVALID_OUTPUT
    assert verdict.status is Status.ERROR


def test_a_dict_valued_inspect_score_is_one_grader_per_key() -> None:
    [verdict] = inspect_log.verdicts(
        {"eval": {"task": "t"}}, [{"id": "a", "scores": {"qa": {"value": {"fact": "C", "style": 0.5}}}}], "x")
    assert [(r.name, r.passed, r.score) for r in verdict.results] == [("qa/fact", True, 1.0), ("qa/style", False, 0.5)]
    assert verdict.status is Status.FAILED


def test_epochs_are_attempts_clustered_by_sample() -> None:
    header = {"eval": {"task": "t", "config": {"epochs": 2}}, "results": {"scores": [{"name": "m", "scorer": "match"}]}}
    samples = [{"id": 3, "epoch": 1, "scores": {"m": {"value": "C"}}},
               {"id": 3, "epoch": 2, "error": {"message": "boom"}}]
    one, two = inspect_log.verdicts(header, samples, "x")
    assert (one.id, one.cluster, two.id, two.cluster) == ("3#r1", "3", "3#r2", "3")
    assert two.status is Status.ERROR and "boom" in (two.results[0].reason or "")
    assert two.results[0].type == "inspect:match"


def test_a_bad_sample_is_named_with_its_place() -> None:
    with pytest.raises(SpecError, match=r"log.json: samples\[1\]"):
        inspect_log.verdicts({"eval": {"task": "t"}}, [{"id": "a", "scores": {}}, {"epoch": 1}], "log.json")


def test_assays_own_results_lines_are_not_parsed_here(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_bytes(orjson.dumps({"id": "a", "status": "passed", "passed": True, "score": 1.0, "results": []}) + b"\n")
    assert read_foreign(path) is None
    assert [v.id for v in load_verdicts(path)] == ["a"]


def test_an_unrelated_json_document_is_left_to_assays_reader(tmp_path: Path) -> None:
    path = tmp_path / "doc.json"
    path.write_text(json.dumps({"samples": [{"id": "a", "status": "failed", "passed": False, "score": 0.0,
                                             "results": []}]}))
    assert read_foreign(path) is None
    assert [v.status for v in load_verdicts(path)] == [Status.FAILED]


@pytest.mark.skipif(importlib.util.find_spec("inspect_ai") is None, reason="inspect-ai is not installed")
@pytest.mark.parametrize("name", ["inspect_b.eval", "inspect_b.json"])
def test_inspect_ai_and_the_plain_reader_agree(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    through_inspect = read_foreign(RUNS / name)
    monkeypatch.setattr(inspect_log, "_inspect_api", lambda: None)
    plain = read_foreign(RUNS / name)
    assert through_inspect is not None and plain is not None
    key = lambda v: v.id  # noqa: E731
    assert [v.to_dict() for v in sorted(through_inspect, key=key)] == [v.to_dict() for v in sorted(plain, key=key)]


def test_an_older_version_3_file_without_failure_reasons_reads_alike() -> None:
    """Files from before ``failureReason`` (and with the provider as a bare id) give the same
    verdicts: an error is a failure nothing graded."""
    doc = json.loads((RUNS / "promptfoo_b.json").read_text())
    current = [(v.id, v.status, [r.status for r in v.results]) for v in promptfoo.verdicts(doc, "x.json")]
    for row in rows_of(doc):
        del row["failureReason"]
        row["provider"] = row["provider"]["id"]
    older = [(v.id, v.status, [r.status for r in v.results]) for v in promptfoo.verdicts(doc, "x.json")]
    assert older == current
    assert {status for _, status, _ in older} == {Status.PASSED, Status.FAILED, Status.ERROR}


@pytest.mark.parametrize("name", ["promptfoo_b.json", "inspect_b.json", "inspect_b.eval"])
def test_a_file_cut_anywhere_is_refused_as_damaged_never_a_crash(name: str, tmp_path: Path) -> None:
    data = (RUNS / name).read_bytes()
    cut = tmp_path / name
    for at in range(32, len(data), max(1, len(data) // 40)):  # from past the first key, which tells the tool
        cut.write_bytes(data[:at])
        with pytest.raises(SpecError) as got:
            load_verdicts(cut)
        assert str(cut) in str(got.value)


def test_a_changed_byte_inside_an_eval_member_is_caught_by_its_checksum(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """By the plain reader (Inspect's own does not check checksums)."""
    import zipfile

    monkeypatch.setattr(inspect_log, "_inspect_api", lambda: None)
    data = bytearray((RUNS / "inspect_b.eval").read_bytes())
    with zipfile.ZipFile(RUNS / "inspect_b.eval") as log:
        info = next(i for i in log.infolist() if i.filename == "samples/japan_epoch_1.json")
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    data[start + info.compress_size // 2] ^= 0x01
    (tmp_path / "flipped.eval").write_bytes(bytes(data))
    with pytest.raises(SpecError, match=r"flipped.eval: samples/japan_epoch_1.json: damaged"):
        load_verdicts(tmp_path / "flipped.eval")


def test_a_zip_that_is_not_an_inspect_log_says_so(tmp_path: Path) -> None:
    import zipfile

    with zipfile.ZipFile(tmp_path / "other.zip", "w") as z:
        z.writestr("readme.txt", "hello")
    with pytest.raises(SpecError, match=r"other.zip: a zip without Inspect's header.json"):
        load_verdicts(tmp_path / "other.zip")
