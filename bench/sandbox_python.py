"""Cost of one sandboxed Python evaluation, next to a fresh ``python3 -c`` per evaluation.

Measures, on this machine, with every confinement layer on:
- latency: sequential calls of a trivial evaluator through ``PythonPool.call`` (median, p95),
  and one sample at a time through ``assay.grade`` (every layer: spec, sandbox, result; target
  <= 3 ms median, what an editor's test run or a lone API test pays);
- throughput: the same evaluator called from several threads at once (evaluations/s);
- batched: ``PythonPool.call_batch`` over distinct samples (a chunk per child, every zygote at
  once), and the same through ``assay.grade_batch`` with a ``code`` grader (target: 10,000/s);
- the baseline: a fresh interpreter per evaluation (``python3 -I -c`` running the evaluator
  on JSON arguments), which is what a pool-less design would pay before any isolation.
Each figure is the median of ``--rounds`` rounds. Run: ``.venv/bin/python bench/sandbox_python.py``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time

from _load import concurrent_rate

from assay.core.interfaces import CodeBatch, CodeCall
from assay.sandbox.python import PythonPool

TRIVIAL = """
def evaluate(input, output, expected, metadata):
    return {"passed": output == expected, "score": 1.0 if output == expected else 0.0}
"""
TYPICAL = """
import json, re
from rapidfuzz import fuzz
def evaluate(input, output, expected, metadata):
    data = json.loads(output)
    score = fuzz.ratio(data["answer"], expected) / 100
    return {"passed": score > 0.8 and bool(re.search(r"\\d", data["answer"])), "score": score}
"""
ARGS = ["What is 6 x 7?", '{"answer": "It is 42"}', "It is 42", {"id": 1}]


def sequential(pool: PythonPool, source: str, n: int) -> list[float]:
    call = CodeCall("python", source, ARGS)
    times = []
    for _ in range(n):
        start = time.perf_counter()
        out = pool.call(call)
        times.append((time.perf_counter() - start) * 1000)
        assert out.ok, out
    return times


def throughput(pool: PythonPool, source: str, threads: int, per_thread: int) -> float:
    return concurrent_rate(pool, CodeCall("python", source, ARGS), threads, per_thread)


def batched(pool: PythonPool, source: str, n: int) -> float:
    """Samples/s of one ``call_batch`` of ``n`` distinct samples (chunks on every zygote at once)."""
    args = [[f"question {i}", f'{{"answer": "It is {i % 7}"}}', "It is 3", {"i": i}] for i in range(n)]
    start = time.perf_counter()
    outcomes = pool.call_batch(CodeBatch("python", source, args))
    elapsed = time.perf_counter() - start
    assert all(o.ok for o in outcomes), [o for o in outcomes if not o.ok][:2]
    return n / elapsed


def graded(source: str, n: int) -> float:
    """Samples/s through the library: ``assay.grade_batch`` with a ``code`` grader (validation,
    the sandbox batch, checking each returned value, building results)."""
    import assay

    samples = [{"id": str(i), "input": "q", "output": f"answer {i % 7}", "expected": "answer 3"} for i in range(n)]
    spec = {"type": "code", "config": {"language": "python", "code": source}}
    start = time.perf_counter()
    results = assay.grade_batch(spec, samples)
    elapsed = time.perf_counter() - start
    assert all(r.error is None for r in results), [r for r in results if r.error][:2]
    return n / elapsed


def one_graded(source: str, n: int) -> list[float]:
    """ms of each of ``n`` sequential ``assay.grade`` calls with a ``code`` grader, one sample each."""
    import assay

    spec = {"type": "code", "config": {"language": "python", "code": source}}
    sample = {"id": "1", "input": "q", "output": "answer 3", "expected": "answer 3"}
    times = []
    for _ in range(n):
        start = time.perf_counter()
        result = assay.grade(spec, sample)
        times.append((time.perf_counter() - start) * 1000)
        assert result.passed, result
    return times


def fresh_python(source: str, n: int) -> list[float]:
    script = ("import json, sys\n" + source + "\nprint(json.dumps(evaluate(*json.loads(sys.argv[1]))))")
    import json

    arg = json.dumps(ARGS)
    times = []
    for _ in range(n):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-I", "-c", script, arg], check=True, capture_output=True)
        times.append((time.perf_counter() - start) * 1000)
    return times


def p95(values: list[float]) -> float:
    return sorted(values)[int(len(values) * 0.95)]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300, help="sequential calls per round")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--size", type=int, default=None, help="zygotes (default: one per core)")
    parser.add_argument("--batch", type=int, default=20000, help="samples per batched round")
    opts = parser.parse_args(argv)
    with PythonPool(opts.size) as pool:
        hello = pool.start()
        sequential(pool, TRIVIAL, 20)  # warm-up
        rows = {}
        for name, source in (("trivial", TRIVIAL), ("json+re+rapidfuzz", TYPICAL)):
            rounds = [sequential(pool, source, opts.calls) for _ in range(opts.rounds)]
            rows[name] = (statistics.median(statistics.median(r) for r in rounds),
                          statistics.median(p95(r) for r in rounds))
        per_thread = max(1, opts.calls // opts.threads)
        tput = statistics.median(throughput(pool, TRIVIAL, opts.threads, per_thread) for _ in range(opts.rounds))
        batched(pool, TRIVIAL, 1000)  # warm-up
        batch = {name: statistics.median(batched(pool, source, opts.batch) for _ in range(opts.rounds))
                 for name, source in (("trivial", TRIVIAL), ("json+re+rapidfuzz", TYPICAL))}
    graded(TRIVIAL, 1000)  # start the library's own pool
    one_graded(TRIVIAL, 20)  # warm-up
    one = statistics.median(statistics.median(one_graded(TRIVIAL, opts.calls)) for _ in range(opts.rounds))
    library = statistics.median(graded(TRIVIAL, opts.batch) for _ in range(opts.rounds))
    fresh = statistics.median(statistics.median(fresh_python(TRIVIAL, 30)) for _ in range(opts.rounds))
    print(f"Python evaluators, {pool.size} zygotes on {os.cpu_count()} cores; "
          f"layers: {', '.join(hello.get('active_layers', []))}")
    print(f"{'evaluator':<22}{'pool median ms':>16}{'pool p95 ms':>13}")
    for name, (med, tail) in rows.items():
        print(f"{name:<22}{med:>16.2f}{tail:>13.2f}")
    print(f"one call through assay.grade, trivial: median {one:.2f} ms (target <= 3 ms)")
    print(f"throughput, {opts.threads} threads, one call each, trivial: {tput:.0f} evaluations/s")
    for name, rate in batch.items():
        target = "  (target >= 10,000/s)" if name == "trivial" else ""
        print(f"batched, {opts.batch:,} samples, {name}: {rate:,.0f} samples/s{target}")
    print(f"batched through assay.grade_batch, trivial: {library:,.0f} samples/s "
          f"({library / tput:.0f}x one call at a time)")
    print(f"fresh `python3 -I -c` per evaluation (no isolation): median {fresh:.1f} ms")


if __name__ == "__main__":
    main()
