"""Node.js code-evaluator latency: the confined isolated-vm worker pool against a fresh `node`.

Run: .venv/bin/python bench/sandbox_node.py [--n 200] [--threads 4]
Targets: trivial evaluator <= 5 ms median, lodash evaluator <= 10 ms median (per call, from
Python, through the pool). A fresh `node -e` per evaluation is shown for comparison.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

from _load import concurrent_rate

from assay.core.interfaces import CodeCall
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
        layers = pool.call(CodeCall("nodejs", EVALUATORS["trivial"], ARGS)).limits["layers"]
    print(f"Node.js evaluators, pool of {pool.size} workers on {os.cpu_count()} cores; layers: {', '.join(layers)}")
    print(f"{'evaluator':<24}{'pool median ms':>16}{'pool p95 ms':>13}{'fresh node -e ms':>18}")
    for name, med, p95, fresh in rows:
        print(f"{name:<24}{med:>16.2f}{p95:>13.2f}{fresh:>18.1f}")
    print(f"throughput, {opts.threads} threads: trivial {tput:.0f}/s, lodash {tput_lodash:.0f}/s")


if __name__ == "__main__":
    main()
