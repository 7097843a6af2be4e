"""The Ray engine beside the local one: `assay run` over generated JSONL datasets, samples/s and
the driver's peak memory (RSS), each measurement in a fresh process.

- presets: 1,000,000 samples x (exact_match, regex, similarity, json_schema), and 100,000 to
  show whether the driver's peak memory follows the dataset's size;
- code: 100,000 samples x one Python code evaluator (the sandbox pool, one per Ray worker).

The local Ray is started by each Ray measurement (its start-up, ~5-10 s, is inside the time).
``--quick`` divides every size by 10. Skipped, saying so, when Ray is not installed.

    python bench/ray_engine.py [--quick] [--code-samples N]
"""

from __future__ import annotations

import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import orjson  # noqa: E402
import presets  # noqa: E402

PRESETS = """\
  - {type: exact_match, name: exact}
  - {type: regex, name: capital, config: {pattern: "(?:capital|首都)\\\\s*\\\\S+", flags: i}}
  - {type: similarity, name: close, config: {algorithm: levenshtein, threshold: 0.8}}
  - type: json_schema
    name: shape
    config: {schema: {type: object, required: [id, name], properties: {id: {type: integer}}}}
"""
CODE = """\
  - type: code
    name: length-py
    config:
      language: python
      code: |
        def evaluate(input, output, expected, metadata):
            return {"passed": len(output) >= 100, "score": min(1.0, len(output) / 100)}
"""
MAX_TEXT = 300
"""Characters kept of each generated output, so that a million rows stay a few hundred MB."""


def write_dataset(path: Path, rows: int) -> None:
    """``rows`` JSONL samples cycling over 20,000 generated pairs; one in five outputs is JSON."""
    texts = presets.make_samples(20_000, seed=5)
    docs = presets.make_json_samples(4_000)
    rng = random.Random(3)
    with path.open("wb") as fh:
        for i in range(rows):
            s = texts[i % len(texts)]
            output = docs[i % len(docs)].output if i % 5 == 0 else s.output[:MAX_TEXT]
            expected = s.expected[:MAX_TEXT] if rng.random() < 0.7 else output
            fh.write(orjson.dumps({"id": f"r{i}", "input": "q", "output": output, "expected": expected}) + b"\n")


def measure(suite: Path, engine: str) -> dict:
    """One `assay run` in this process: samples/s and the peak RSS of this (the driver) process."""
    from assay.cli.run_cmd import execute

    out = suite.parent / f"results-{engine}.jsonl"
    t = time.perf_counter()
    execute(suite, out=out, junit=None, results=None, threshold=None, concurrency=8, resume=False,
            cost_ordered=None, summary_json=None, quiet=True, engine=engine)
    elapsed = time.perf_counter() - t
    with out.open("rb") as fh:
        graded = sum(1 for _ in fh)
    return {"seconds": elapsed, "samples": graded,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def run_one(kind: str, rows: int, engine: str, workdir: Path) -> dict:
    """``measure`` in a fresh process, so each peak memory is its own."""
    done = subprocess.run([sys.executable, __file__, "--one", kind, str(rows), engine, str(workdir)],
                          capture_output=True, text=True, timeout=3600)
    if done.returncode != 0:
        raise RuntimeError(f"{kind} {rows} {engine} failed: {done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str]) -> list[tuple[str, int, str, dict]]:
    try:
        import ray.data  # noqa: F401
    except ImportError:
        print("Ray engine: Ray is not installed (pip install 'assay[ray]'); not measured")
        return []
    scale = 10 if "--quick" in argv else 1
    # The 100,000 samples for the code evaluator (the sandbox's batched path grades
    # thousands a second); ``--code-samples N`` asks for another number.
    code = int(argv[argv.index("--code-samples") + 1]) if "--code-samples" in argv else 100_000
    plan = [("presets", 100_000 // scale), ("presets", 1_000_000 // scale), ("code", code // scale)]
    rows_out = []
    with tempfile.TemporaryDirectory(prefix="assay-ray-bench-") as tmp:
        for kind, rows in plan:
            work = Path(tmp) / f"{kind}-{rows}"
            work.mkdir()
            write_dataset(work / "data.jsonl", rows)
            (work / "eval.yaml").write_text(f"name: bench\ndataset: data.jsonl\ngraders:\n"
                                            f"{PRESETS if kind == 'presets' else CODE}", encoding="utf-8")
            for engine in ("local", "ray"):
                rows_out.append((kind, rows, engine, run_one(kind, rows, engine, work)))
    return rows_out


def report(rows: list[tuple[str, int, str, dict]]) -> None:
    if not rows:
        return
    print(f"{'suite':10} {'samples':>10} {'engine':7} {'seconds':>8} {'samples/s':>10} {'driver peak RSS':>16}")
    for kind, n, engine, m in rows:
        print(f"{kind:10} {n:>10,} {engine:7} {m['seconds']:>8.1f} {m['samples'] / m['seconds']:>10,.0f} "
              f"{m['peak_rss_mb']:>13,.0f} MB")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--one"]:
        _, _, kind, n, engine, workdir = sys.argv
        print(json.dumps(measure(Path(workdir) / "eval.yaml", engine)))
    else:
        print("Ray engine beside the local engine (`assay run`, JSONL; a local Ray started per Ray run)")
        report(main(sys.argv[1:]))
