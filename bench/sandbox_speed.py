"""Code evaluators in one table, measured in one run: one call at a time and batched, both languages,
with and without a library, every isolation layer on.

- one call: sequential ``assay.grade`` calls with a ``code`` grader, one sample each (spec,
  sandbox, result: what an editor's test run or a lone API test pays); median ms, after warm-up;
- batched: ``call_batch`` of distinct samples on the pool (chunks on every worker at once);
  samples/s, and the CPU time per sample (the workers' and this process's), which does not
  depend on what else the machine runs, with the rate it gives on idle cores.
Each figure is the median of ``--rounds`` rounds; the load average is printed before and after.
Targets (issue 26): Python one call <= 3 ms; Node.js one call <= 2 ms, batched >= 3,000 trivial
samples/s and >= 1,000/s with lodash on 2 cores.
Run: ``.venv/bin/python bench/sandbox_speed.py [--rounds 3]``.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import time
from collections.abc import Callable
from typing import Any

import sandbox_node
import sandbox_python

import assay
from assay.core.interfaces import CodeBatch
from assay.sandbox.node import NodePool
from assay.sandbox.python import PythonPool

ROWS: list[tuple[str, str, str, int, str]] = [
    # language, evaluator, source, batch size, targets
    ("python", "trivial", sandbox_python.TRIVIAL, 20000, "one call <= 3 ms"),
    ("python", "json + re + rapidfuzz", sandbox_python.TYPICAL, 10000, ""),
    ("nodejs", "trivial", sandbox_node.EVALUATORS["trivial"], 6000, "one call <= 2 ms; >= 3,000/s"),
    ("nodejs", "with lodash", sandbox_node.EVALUATORS["lodash"], 3000, ">= 1,000/s"),
]


def samples_for(language: str, n: int) -> list[list[Any]]:
    if language == "python":
        return [[f"question {i}", f'{{"answer": "It is {i % 7}"}}', "It is 3", {"i": i}] for i in range(n)]
    return [[f"question {i}", f"Paris {'is the capital of' if i % 3 else 'lies in'} France.", "Paris",
             {"keywords": ["Paris", "France", "capital", f"k{i % 5}"]}] for i in range(n)]


def one_call(language: str, source: str, calls: int) -> float:
    """Median ms of ``calls`` sequential ``assay.grade`` calls (after 20 warm-up calls)."""
    spec = {"type": "code", "config": {"language": language, "code": source}}
    args = samples_for(language, 1)[0]
    sample = {"id": "1", "input": args[0], "output": args[1], "expected": args[2], "metadata": args[3]}
    times = []
    for k in range(calls + 20):
        start = time.perf_counter()
        result = assay.grade(spec, sample)
        if k >= 20:
            times.append((time.perf_counter() - start) * 1000)
        assert result.error is None, result
    return statistics.median(times)


def batched(pool: PythonPool | NodePool, language: str, source: str, n: int) -> float:
    """Samples/s of one ``call_batch`` of ``n`` distinct samples on a started pool."""
    args = samples_for(language, n)
    start = time.perf_counter()
    outcomes = pool.call_batch(CodeBatch(language, source, args))
    elapsed = time.perf_counter() - start
    assert all(o.ok for o in outcomes), [o for o in outcomes if not o.ok][:2]
    return n / elapsed


def cpu_per_sample(opener: Callable[[], PythonPool | NodePool], language: str, source: str, n: int) -> float:
    """CPU ms per sample of one batch of ``n`` on a pool of its own, every process counted
    (start-up included): the workers' once the pool is closed and waited for, and this one's."""
    children, own = resource.getrusage(resource.RUSAGE_CHILDREN), resource.getrusage(resource.RUSAGE_SELF)
    with opener() as pool:  # closing waits for every worker (and zygote) it started
        pool.call_batch(CodeBatch(language, source, samples_for(language, n)))
    children_after, own_after = resource.getrusage(resource.RUSAGE_CHILDREN), resource.getrusage(resource.RUSAGE_SELF)
    spent = (children_after.ru_utime + children_after.ru_stime - children.ru_utime - children.ru_stime
             + own_after.ru_utime + own_after.ru_stime - own.ru_utime - own.ru_stime)
    return spent * 1000 / n


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--calls", type=int, default=300, help="sequential one-sample calls per round")
    opts = parser.parse_args(argv)
    load_before = os.getloadavg()[0]
    figures: dict[str, Any] = {}
    openers: dict[str, Callable[[], PythonPool | NodePool]] = {"python": PythonPool, "nodejs": NodePool}
    pools = {language: opener() for language, opener in openers.items()}
    try:
        for language, name, source, n, _target in ROWS:
            pool = pools[language]
            batched(pool, language, source, min(n, 2000))  # start the workers, load the libraries
            ones = [one_call(language, source, opts.calls) for _ in range(opts.rounds)]
            rates = [batched(pool, language, source, n) for _ in range(opts.rounds)]
            cpu = statistics.median(cpu_per_sample(openers[language], language, source, n) for _ in range(opts.rounds))
            figures[f"{language}/{name}"] = (statistics.median(ones), statistics.median(rates), cpu)
    finally:
        for pool in pools.values():
            pool.close()
    load_after = os.getloadavg()[0]
    cores = os.cpu_count() or 1
    print(f"Code evaluators, one run, {cores} cores, every layer on; median of {opts.rounds} rounds; "
          f"load average {load_before:.1f} before, {load_after:.1f} after")
    print(f"{'language':<9}{'evaluator':<24}{'one call ms':>12}{'batched /s':>12}{'CPU ms/sample':>15}"
          f"{'idle-core rate':>16}  target")
    for language, name, _source, _n, target in ROWS:
        one, rate, cpu = figures[f"{language}/{name}"]
        print(f"{language:<9}{name:<24}{one:>12.2f}{rate:>12,.0f}{cpu:>15.3f}{cores * 1000 / cpu:>16,.0f}  {target}")
    return figures


if __name__ == "__main__":
    main()
