"""Results files: every line stamped with the suite's fingerprint, read strictly, written
whatever the values."""

from __future__ import annotations

import json

import orjson
import pytest

from assay.core.aggregate import judge_sample
from assay.core.errors import SpecError
from assay.core.result import GraderResult, Status
from assay.runner.local_engine.run import run_suite
from assay.runner.results import JsonlSink, read_results, suite_fingerprint, verdict_line
from assay.runner.suites import load_suite


def suite_at(tmp_path, graders="[{type: exact_match}]", threshold=""):
    (tmp_path / "data.jsonl").write_text("".join(
        json.dumps({"id": f"s{i}", "output": "x", "expected": "x" if i % 2 else "y"}) + "\n" for i in range(6)))
    path = tmp_path / "eval.yaml"
    path.write_text(f"name: r\ndataset: data.jsonl\ngraders: {graders}\n{threshold}")
    return load_suite(path)


def write_run(tmp_path, suite):
    out = tmp_path / "results.jsonl"
    sink = JsonlSink(out, fingerprint=suite_fingerprint(suite))
    run_suite(suite, sink=sink, chunk_size=2)
    sink.close()
    return out


def test_fingerprint_follows_graders_threshold_and_config(tmp_path):
    base = suite_fingerprint(suite_at(tmp_path))
    assert base == suite_fingerprint(suite_at(tmp_path))
    assert base != suite_fingerprint(suite_at(tmp_path, "[{type: exact_match, config: {trim: true}}]"))
    assert base != suite_fingerprint(suite_at(tmp_path, "[{type: exact_match, weight: 2}]"))
    assert base != suite_fingerprint(suite_at(tmp_path, threshold="threshold: 0.5\n"))


def test_every_line_carries_the_fingerprint_and_reads_back(tmp_path):
    suite = suite_at(tmp_path)
    out = write_run(tmp_path, suite)
    log = read_results(out)
    assert log.fingerprints == {suite_fingerprint(suite)}
    assert [v.id for v in log.verdicts] == [f"s{i}" for i in range(6)]
    assert [v.status for v in log.verdicts][:2] == [Status.FAILED, Status.PASSED]


@pytest.mark.parametrize("damage, message", [
    (lambda lines: [lines[0], b"{not json\n", *lines[2:]], r"results.jsonl:2: damaged line"),
    (lambda lines: [lines[0], b'{"status": "passed", "results": []}\n', *lines[2:]], r":2: .*no sample `id`"),
    (lambda lines: [*lines, lines[0]], r":7: sample 's0' is written twice \(first on line 1\)"),
    (lambda lines: [lines[0], b"[1, 2]\n", *lines[2:]], r":2: a results line must be an object"),
    (lambda lines: [lines[0].replace(b'"status":"failed"', b'"status":"sideways"', 1), *lines[1:]], r":1: .*unknown status"),
])
def test_damage_before_the_last_line_is_an_error_naming_it(tmp_path, damage, message):
    out = write_run(tmp_path, suite_at(tmp_path))
    out.write_bytes(b"".join(damage(out.read_bytes().splitlines(keepends=True))))
    before = out.read_bytes()
    with pytest.raises(SpecError, match=message):
        read_results(out)
    assert out.read_bytes() == before  # nothing truncated


def test_a_torn_last_line_is_dropped_and_cut_off(tmp_path):
    out = write_run(tmp_path, suite_at(tmp_path))
    whole = out.read_bytes()
    out.write_bytes(whole + b'{"id": "s9", "status": "pass')
    log = read_results(out)
    assert len(log.verdicts) == 6 and log.torn_line == 7
    log.drop_torn_line()
    assert out.read_bytes() == whole
    out.write_bytes(whole[:-1])  # even a complete object is torn without its newline
    assert len(read_results(out).verdicts) == 5


def test_unwritable_values_are_normalised_not_lost():
    bad = GraderResult(name="g", type="code", status=Status.PASSED, passed=True, score=1.0,
                       reason="lone \ud800 surrogate", details={"big": 2**80, "nan": float("nan")})
    row = orjson.loads(verdict_line(judge_sample("s\udfff", [bad]), "fp"))
    assert row["id"] == "s\ufffd" and row["fingerprint"] == "fp"
    assert row["results"][0]["reason"] == "lone \ufffd surrogate"
    assert row["results"][0]["details"] == {"big": str(2**80), "nan": "NaN"}
