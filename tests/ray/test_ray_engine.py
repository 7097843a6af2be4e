"""The Ray engine gives the local engine's answers: the same results lines (order and
``latency_ms`` aside) for one suite read from JSONL, CSV and Parquet, with presets and a Python
code evaluator; a resumed run ends with every sample written once. Each Ray run is `assay run --engine ray` in a
process of its own, which starts and stops a local Ray."""

from __future__ import annotations

import csv
import json
import os
import random
import subprocess
import sys
import textwrap

import orjson
import pytest

from assay.cli.run_cmd import execute
from assay.settings import Settings

pytestmark = pytest.mark.ray

ROWS = 600
PRESETS = """\
  - {type: exact_match, name: exact}
  - {type: contains, name: has-expected}
  - {type: regex, name: capital, config: {pattern: "capital|首都", flags: i}}
  - {type: similarity, name: close, config: {algorithm: levenshtein, threshold: 0.6}}
  - {type: similarity, name: terms, config: {algorithm: jaccard, threshold: 0.3}, weight: 0.5}
  - type: json_schema
    name: shape
    config: {schema: {type: object, required: [city], properties: {city: {type: string}}}}
"""
CODE = """\
  - type: code
    name: keywords-py
    config:
      language: python
      code: |
        def evaluate(input, output, expected, metadata):
            keywords = metadata.get("keywords", [])
            found = [k for k in keywords if k in (output or "")]
            score = len(found) / len(keywords) if keywords else 1.0
            return {"passed": score >= 0.5, "score": score, "reason": f"{len(found)}/{len(keywords)}",
                    "details": {"found": found, "extra": sorted(metadata)}}
"""


def rows() -> list[dict]:
    """Varied rows: ASCII and Chinese, JSON and prose outputs, equal and edited expectations,
    metadata whose keys differ from row to row."""
    rng = random.Random(12)
    words = ["capital", "Paris", "首都", "北京", "river", "city", "population", "上海", "the", "of"]
    out = []
    for i in range(ROWS):
        text = " ".join(rng.choice(words) for _ in range(rng.randint(1, 12)))
        output = json.dumps({"city": text}, ensure_ascii=False) if i % 5 == 0 else text
        expected = output if i % 3 == 0 else " ".join(rng.choice(words) for _ in range(rng.randint(0, 6)))
        meta = {"keywords": rng.sample(words, rng.randint(0, 3))}
        if i % 4 == 0:
            meta["source"] = f"batch-{i % 7}"
        out.append({"id": f"s{i:04d}", "input": f"question {i}", "output": output, "expected": expected,
                    "metadata": meta})
    return out


def write_dataset(path, fmt: str) -> None:
    data = rows()
    if fmt == "jsonl":
        path.write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in data))
    elif fmt == "csv":
        with path.open("w", newline="", encoding="utf-8") as fh:
            w = csv.DictWriter(fh, ["id", "input", "output", "expected", "metadata"])
            w.writeheader()
            for r in data:
                w.writerow({**r, "metadata": json.dumps(r["metadata"], ensure_ascii=False)})
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq

        # metadata as JSON text: a struct column would give every row every key
        pq.write_table(pa.Table.from_pylist([{**r, "metadata": None, "tags": ",".join(r["metadata"]["keywords"])}
                                             for r in data]), path)


def suite(tmp_path, fmt: str, graders: str):
    write_dataset(tmp_path / f"data.{fmt}", fmt)
    p = tmp_path / "eval.yaml"
    p.write_text(f"name: equivalence\ndataset: data.{fmt}\ngraders:\n{graders}", encoding="utf-8")
    return p


def run(path, out, engine: str, *, resume: bool = False, ray_env: dict[str, str] | None = None) -> int:
    """``assay run``: the local engine in this process; Ray through the command line in a process of
    its own, on the session's local Ray (``ray_env``), so Ray's threads and signal handlers never
    live in the test process the other folders' tests share."""
    if engine == "local":
        return execute(path, out=out, junit=None, results=None, threshold=None, concurrency=4, resume=resume,
                       cost_ordered=None, summary_json=None, quiet=True, engine=engine)
    args = [sys.executable, "-m", "assay.cli.main", "run", str(path), "--out", str(out), "-q", "--engine", "ray"]
    done = subprocess.run(args + (["--resume"] if resume else []), capture_output=True, text=True, timeout=300,
                          env={**os.environ, **(ray_env or {})})
    if done.returncode == 2:
        raise RuntimeError(done.stderr)
    return done.returncode


def lines(path) -> dict[str, dict]:
    """Results lines by id, without the measured ``latency_ms``; a sample written twice fails."""
    found: dict[str, dict] = {}
    for raw in path.read_bytes().splitlines():
        row = orjson.loads(raw)
        for r in row["results"]:
            r.pop("latency_ms")
        assert row["id"] not in found, f"{row['id']} written twice"
        found[row["id"]] = row
    return found


@pytest.mark.parametrize("fmt", ["jsonl", "csv", "parquet"])
def test_ray_writes_the_local_engines_lines(tmp_path, ray_env, fmt):
    # JSONL adds the sandbox (object path in both engines); CSV and Parquet have presets only,
    # which a Ray worker grades on the columnar path and the local engine (600 rows, below
    # columnar.MIN_ROWS) on the object path.
    graders = PRESETS + CODE if fmt == "jsonl" else PRESETS
    path = suite(tmp_path, fmt, graders)
    local_code = run(path, tmp_path / "local.jsonl", "local")
    assert local_code == run(path, tmp_path / "ray.jsonl", "ray", ray_env=ray_env) == 1
    local, ray = lines(tmp_path / "local.jsonl"), lines(tmp_path / "ray.jsonl")
    assert len(local) == ROWS and local == ray


def test_resume_grades_only_what_is_missing(tmp_path, ray_env):
    path = suite(tmp_path, "jsonl", PRESETS)
    run(path, tmp_path / "local.jsonl", "local")
    done = (tmp_path / "local.jsonl").read_bytes().splitlines(keepends=True)
    partial = tmp_path / "ray.jsonl"
    partial.write_bytes(b"".join(done[:250]) + done[250][:40])  # 250 lines, then a torn one
    assert run(path, partial, "ray", resume=True, ray_env=ray_env) == 1
    assert lines(partial) == lines(tmp_path / "local.jsonl")


def test_a_row_without_an_id_is_refused_with_the_file_named(tmp_path, ray_env):
    path = suite(tmp_path, "jsonl", PRESETS)
    (tmp_path / "data.jsonl").write_text('{"id": "a", "output": "x"}\n{"output": "y"}\n', encoding="utf-8")
    with pytest.raises(Exception, match=r"data\.jsonl.*needs an `id`"):
        run(path, tmp_path / "ray.jsonl", "ray", ray_env=ray_env)


def test_an_id_repeated_in_another_batch_is_refused_before_its_line_is_written(tmp_path, ray_env):
    path = suite(tmp_path, "jsonl", "  - {type: exact_match}\n")
    ids = [f"r{i}" for i in range(5000)]
    ids[4700] = "r10"  # pure graders: batches of 4,096 rows, so the two rows are graded apart
    (tmp_path / "data.jsonl").write_bytes(b"".join(orjson.dumps({"id": i, "output": "x", "expected": "x"}) + b"\n"
                                                   for i in ids))
    with pytest.raises(RuntimeError, match=r"data\.jsonl.*duplicate sample id 'r10'"):
        run(path, tmp_path / "ray.jsonl", "ray", ray_env=ray_env)
    written = [orjson.loads(line)["id"] for line in (tmp_path / "ray.jsonl").read_bytes().splitlines()]
    assert len(written) == len(set(written)) and len(written) < 5000


def test_inline_samples_are_shipped_to_the_workers(tmp_path, ray_env):
    p = tmp_path / "eval.yaml"
    p.write_text(textwrap.dedent("""\
        name: inline
        samples:
          - {id: a, output: "Paris", expected: "Paris"}
          - {id: b, output: "Lyon", expected: "Paris"}
        graders:
          - {type: exact_match, name: exact}
        """), encoding="utf-8")
    run(p, tmp_path / "local.jsonl", "local")
    run(p, tmp_path / "ray.jsonl", "ray", ray_env=ray_env)
    assert lines(tmp_path / "local.jsonl") == lines(tmp_path / "ray.jsonl")


def test_a_worker_whose_init_never_ran_is_collected_quietly():
    """Ray may collect a ``GradingActor`` whose ``__init__`` failed or never ran: ``__del__``
    must not raise (it used to, with an AttributeError on ``_pool``)."""
    from assay.runner.ray_engine._worker import GradingActor

    class Failing:
        def open(self, context):
            raise RuntimeError("the suite could not be opened")

    with pytest.raises(RuntimeError, match="could not be opened"):
        GradingActor(Failing(), Settings(), fingerprint=None)  # type: ignore[arg-type]
    bare = GradingActor.__new__(GradingActor)
    bare.__del__()
    bare.close()
