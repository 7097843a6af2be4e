"""Cost of one sandboxed Python evaluation, next to a fresh ``python3 -c`` per evaluation.

Measures, on this machine, with every confinement layer on:
- latency: sequential calls of a trivial evaluator through ``PythonPool.call`` (median, p95);
- throughput: the same evaluator called from several threads at once (evaluations/s);
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

from assay.core.interfaces import CodeCall
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
    fresh = statistics.median(statistics.median(fresh_python(TRIVIAL, 30)) for _ in range(opts.rounds))
    print(f"Python evaluators, {pool.size} zygotes on {os.cpu_count()} cores; "
          f"layers: {', '.join(hello.get('active_layers', []))}")
    print(f"{'evaluator':<22}{'pool median ms':>16}{'pool p95 ms':>13}")
    for name, (med, tail) in rows.items():
        print(f"{name:<22}{med:>16.2f}{tail:>13.2f}")
    print(f"throughput, {opts.threads} threads, trivial: {tput:.0f} evaluations/s")
    print(f"fresh `python3 -I -c` per evaluation (no isolation): median {fresh:.1f} ms")


if __name__ == "__main__":
    main()
