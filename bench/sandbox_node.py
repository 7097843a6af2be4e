"""Node.js code-evaluator latency: the confined isolated-vm worker pool against a fresh `node`.

Run: .venv/bin/python bench/sandbox_node.py [--n 200] [--threads 4] [--batch 5000] [--rounds 3]
Targets: trivial evaluator <= 5 ms median, lodash evaluator <= 10 ms median (per call, from
Python, through the pool). A fresh `node -e` per evaluation is shown for comparison.
Batched: ``NodePool.call_batch`` over distinct samples (a chunk per worker request, every
worker at once): ``--batch`` samples with the trivial evaluator, a fifth of that with lodash,
median of ``--rounds`` rounds, beside the one-call rate of the same run; targets: trivial
>= 3,000 samples/s, lodash >= 1,000 samples/s (2 cores, every layer on). On a shared machine
the rates follow the load (the one-minute load average is printed), so the CPU time per
sample is measured too, and the rate it gives on idle cores.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time

from _load import concurrent_rate

from assay.core.interfaces import CodeBatch, CodeCall
from assay.sandbox.node import NODE_DIR, NodePool, find_node

ARGS = ["What is the capital of France?", "Paris is the capital of France.", "Paris",
        {"keywords": ["Paris", "France", "capital", "Europe"]}]
EVALUATORS = {
    "trivial": "module.exports = async (input, output, expected) => ({ passed: output.includes(expected), score: 1 });",
    "lodash": """const _ = require('lodash');
module.exports = async (input, output, expected, metadata) => {
  const found = metadata.keywords.filter(k => output.includes(k));
  return { passed: found.length >= 3, score: found.length / metadata.keywords.length,
           details: { missing: _.difference(metadata.keywords, found) } };
};""",
    "all four + ajv compile": """const _ = require('lodash'), dayjs = require('dayjs'), validator = require('validator'), Ajv = require('ajv');
module.exports = async (input, output, expected, metadata) => {
  const ok = new Ajv().validate({ type: 'object', required: ['keywords'] }, metadata);
  return { passed: ok && validator.isAscii(output) && dayjs('2024-01-01').isValid(), score: _.size(metadata.keywords) / 4 };
};""",
}


def timed_calls(pool: NodePool, source: str, n: int) -> list[float]:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        out = pool.call(CodeCall("nodejs", source, ARGS))
        times.append((time.perf_counter() - t) * 1000)
        assert out.ok, out
    return times


def throughput(pool: NodePool, source: str, threads: int, per_thread: int) -> float:
    return concurrent_rate(pool, CodeCall("nodejs", source, ARGS), threads, per_thread)


def batched(pool: NodePool, source: str, n: int) -> float:
    """Samples/s of one ``call_batch`` of ``n`` distinct samples."""
    args = [[f"question {i}", f"Paris {'is the capital of' if i % 3 else 'lies in'} France.", "Paris",
             {"keywords": ["Paris", "France", "capital", f"k{i % 5}"]}] for i in range(n)]
    start = time.perf_counter()
    outcomes = pool.call_batch(CodeBatch("nodejs", source, args))
    elapsed = time.perf_counter() - start
    assert all(o.ok for o in outcomes), [o for o in outcomes if not o.ok][:2]
    return n / elapsed


def cpu_per_sample(source: str, n: int) -> tuple[float, float]:
    """CPU ms per sample of one ``call_batch`` of ``n`` samples on a pool of its own: (the workers,
    start-up and recycling included; this process). Unlike a rate, it does not depend on what
    else the machine runs."""
    children, own = resource.getrusage(resource.RUSAGE_CHILDREN), resource.getrusage(resource.RUSAGE_SELF)
    with NodePool() as pool:
        batched(pool, source, n)
    # close() waited for every worker, so their CPU time is counted in RUSAGE_CHILDREN.
    children_after, own_after = resource.getrusage(resource.RUSAGE_CHILDREN), resource.getrusage(resource.RUSAGE_SELF)

    def spent(a: resource.struct_rusage, b: resource.struct_rusage) -> float:
        return (b.ru_utime + b.ru_stime - a.ru_utime - a.ru_stime) * 1000 / n

    return spent(children, children_after), spent(own, own_after)


def fresh_node(source: str, n: int) -> list[float]:
    """A new `node` per evaluation, no isolation at all: the cheapest per-process design."""
    node = find_node()
    script = (source + "\nPromise.resolve(module.exports(..." + json.dumps(ARGS) + "))"
              ".then(r => process.stdout.write(JSON.stringify(r)));")
    times = []
    for _ in range(n):
        t = time.perf_counter()
        subprocess.run([node, "-e", script], cwd=NODE_DIR, check=True, capture_output=True)
        times.append((time.perf_counter() - t) * 1000)
    return times


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200, help="sequential calls per evaluator")
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--batch", type=int, default=5000, help="samples per batched round")
    parser.add_argument("--rounds", type=int, default=3, help="batched rounds (the median is shown)")
    opts = parser.parse_args(argv)
    if find_node() is None:
        sys.exit("node is not installed")
    rows = []
    with NodePool() as pool:
        for name, source in EVALUATORS.items():
            timed_calls(pool, source, 5)  # start the workers, compile the libraries
            n = opts.n if "ajv" not in name else max(20, opts.n // 5)
            times = timed_calls(pool, source, n)
            fresh = fresh_node(source, 10)
            rows.append((name, statistics.median(times), sorted(times)[int(len(times) * 0.95) - 1],
                         statistics.median(fresh)))
        tput = throughput(pool, EVALUATORS["trivial"], opts.threads, opts.n // 2)
        tput_lodash = throughput(pool, EVALUATORS["lodash"], opts.threads, opts.n // 4)
        batch = {}
        for name, target, one_call, n in (("trivial", 3000, tput, opts.batch), ("lodash", 1000, tput_lodash, opts.batch // 5)):
            batched(pool, EVALUATORS[name], 200)  # warm-up
            batch[name] = (statistics.median(batched(pool, EVALUATORS[name], n) for _ in range(opts.rounds)),
                           target, one_call, n)
        layers = pool.call(CodeCall("nodejs", EVALUATORS["trivial"], ARGS)).limits["layers"]
    cpu = {name: cpu_per_sample(EVALUATORS[name], n) for name, (_r, _t, _o, n) in batch.items()}
    print(f"Node.js evaluators, pool of {pool.size} workers on {os.cpu_count()} cores; layers: {', '.join(layers)}; "
          f"load average {os.getloadavg()[0]:.1f}")
    print(f"{'evaluator':<24}{'pool median ms':>16}{'pool p95 ms':>13}{'fresh node -e ms':>18}")
    for name, med, p95, fresh in rows:
        print(f"{name:<24}{med:>16.2f}{p95:>13.2f}{fresh:>18.1f}")
    print(f"throughput, {opts.threads} threads, one call each: trivial {tput:.0f}/s, lodash {tput_lodash:.0f}/s")
    for name, (rate, target, one_call, n) in batch.items():
        print(f"batched, {n:,} samples, {name}: {rate:,.0f} samples/s (target >= {target:,}/s; "
              f"{rate / one_call:.1f}x one call at a time)")
    for name, (workers, host) in cpu.items():
        print(f"batched, {name}: CPU per sample {workers:.2f} ms in the workers + {host:.2f} ms here; "
              f"{os.cpu_count()} idle cores would give ~{os.cpu_count() * 1000 / (workers + host):,.0f} samples/s")


if __name__ == "__main__":
    main()
