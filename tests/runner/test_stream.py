"""Runs that stream: the dataset read as it is graded (checked first by a scan), a resumed
run's results read back a block at a time, nothing per sample kept but 8-byte id hashes."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from assay.core.aggregate import summarize
from assay.core.errors import AssayError, SpecError
from assay.runner import ids as ids_module
from assay.runner.dataset import load_dataset
from assay.runner.ids import IdHashes
from assay.runner.local_engine.run import run_suite
from assay.runner.local_engine.stream import DatasetStream
from assay.runner.results import JsonlSink, suite_fingerprint
from assay.runner.resume import read_previous
from assay.runner.suites import load_suite

ROWS = [{"id": f"s{i}", "output": "x", "expected": "x" if i % 3 else "y", "topic": i % 4} for i in range(50)]


def write(path, rows):
    if path.suffix == ".jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    elif path.suffix == ".json":
        path.write_text(json.dumps(rows, indent=1))
    elif path.suffix == ".csv":
        path.write_text("id,output,expected,topic\n" + "".join(
            f"{r['id']},{r['output']},{r['expected']},{r['topic']}\n" for r in rows))
    else:
        pq.write_table(pa.Table.from_pylist(rows), path)
    return path


@pytest.mark.parametrize("name", ["data.jsonl", "data.json", "data.csv", "data.parquet"])
def test_a_stream_yields_what_loading_gives(tmp_path, name):
    path = write(tmp_path / name, ROWS)
    stream = DatasetStream(path)
    stream.scan()
    assert stream.count == len(ROWS)
    assert list(stream) == load_dataset(path)
    assert stream.ids.contains(["s0", "s49", "s50"]) == [True, True, False]


@pytest.mark.parametrize("rows, message", [
    ([*ROWS[:3], {"id": "s1", "output": "again"}], r"data.jsonl:4: duplicate sample id 's1' \(first on line 2\)"),
    ([*ROWS[:3], {"id": "z", "duration_ms": -1}], r"data.jsonl:4: .*duration_ms"),
    ([{"id": "a", "answer": "x"}, {"id": "b", "answer": "y"}], r"no row has an `output`.*columns are: answer"),
])
def test_a_scan_reports_a_bad_dataset_before_anything_is_graded(tmp_path, rows, message):
    stream = DatasetStream(write(tmp_path / "data.jsonl", rows))
    with pytest.raises(SpecError, match=message):
        stream.scan()


def test_a_repeated_id_is_found_even_when_every_hash_collides(tmp_path, monkeypatch):
    monkeypatch.setattr(ids_module, "id_hash", lambda sample_id: 1)
    stream = DatasetStream(write(tmp_path / "data.jsonl", ROWS[:10]))
    stream.scan()  # ten ids, one hash: no duplicate
    stream = DatasetStream(write(tmp_path / "data.jsonl", [*ROWS[:10], ROWS[4]]))
    with pytest.raises(SpecError, match=r":11: duplicate sample id 's4' \(first on line 5\)"):
        stream.scan()


def suite_at(tmp_path):
    write(tmp_path / "data.jsonl", ROWS)
    (tmp_path / "eval.yaml").write_text("name: s\ndataset: data.jsonl\ngraders: [{type: exact_match}]\n")
    return load_suite(tmp_path / "eval.yaml")


def test_a_streamed_run_keeps_nothing_and_resumes_where_the_file_stops(tmp_path):
    suite = suite_at(tmp_path)
    whole = run_suite(suite, chunk_size=7)
    stream = DatasetStream(tmp_path / "data.jsonl")
    stream.scan()
    out = tmp_path / "out.jsonl"
    fingerprint = suite_fingerprint(suite)
    sink = JsonlSink(out, fingerprint=fingerprint)
    first = run_suite(suite, samples=(s for i, s in enumerate(stream) if i < 20), sink=sink, chunk_size=7,
                      keep_verdicts=False)
    sink.close()
    assert first.verdicts == [] and first.summary is None
    seen = []
    previous = read_previous(out, fingerprint, seen.extend, known=stream.ids.contains)
    assert previous.count == 20 and [v.id for v in seen] == [f"s{i}" for i in range(20)]
    sink = JsonlSink(out, fingerprint=fingerprint, append=True)
    rest = run_suite(suite, samples=stream, done_ids=previous.ids, sink=sink, chunk_size=7, keep_verdicts=False)
    sink.close()
    assert rest.resumed == 20
    again = []
    read_previous(out, fingerprint, again.extend)
    assert summarize(again).to_dict() == whole.summary.to_dict()
    assert [v.id for v in again] == [f"s{i}" for i in range(50)]


def test_reading_back_refuses_another_suite_a_stranger_and_a_repeat(tmp_path):
    suite = suite_at(tmp_path)
    out = tmp_path / "out.jsonl"
    fingerprint = suite_fingerprint(suite)
    sink = JsonlSink(out, fingerprint=fingerprint)
    run_suite(suite, sink=sink)
    sink.close()
    with pytest.raises(SpecError, match="not by this suite"):
        read_previous(out, "other", lambda chunk: None)
    with pytest.raises(SpecError, match=r"out.jsonl:1: .*holds sample 's0' that this suite's dataset does not have"):
        read_previous(out, fingerprint, lambda chunk: None, known=lambda ids: [i != "s0" for i in ids])
    lines = out.read_bytes().splitlines(keepends=True)
    out.write_bytes(b"".join([*lines, lines[3]]))
    with pytest.raises(SpecError, match=r":51: sample 's3' is written twice \(first on line 4\)"):
        read_previous(out, fingerprint, lambda chunk: None)


def test_a_resumed_run_that_skipped_more_than_the_file_holds_stops(tmp_path, monkeypatch):
    from assay.cli.run_cmd import execute

    suite_at(tmp_path)
    out = tmp_path / "out.jsonl"
    args = dict(out=out, junit=None, results=None, threshold=None, concurrency=1, cost_ordered=None,
                summary_json=None, quiet=True)
    execute(tmp_path / "eval.yaml", resume=False, **args)
    lines = out.read_bytes().splitlines(keepends=True)
    out.write_bytes(b"".join(lines[:10]))
    monkeypatch.setattr(ids_module, "id_hash", lambda sample_id: 1)  # every id "done"
    with pytest.raises(AssayError, match="holds 10 samples but 50 were skipped"):
        execute(tmp_path / "eval.yaml", resume=True, **args)


def test_hashes_are_eight_bytes_each():
    h = IdHashes()
    for i in range(100):
        h.add(str(i))
    assert h.values.itemsize == 8 and len(h) == 100
