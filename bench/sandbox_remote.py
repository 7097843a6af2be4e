"""The remote sandbox path (``RemoteCodeRunner`` -> ``assay sandbox serve`` over loopback) against
the local pool, for the same trivial evaluators.

Measures, with every confinement layer on both sides:
- latency: sequential calls, local and remote rounds interleaved; the overhead is the remote
  median minus the local median (target: at most 2 ms added);
- throughput: 16 client threads at once on one runner, local and remote (evaluations/s).
The service runs as its own process with as many workers as the local pool (one per core by
default). Bounded: about ``rounds x (2 x calls)`` evaluations per language, plus the
throughput runs. Run: ``.venv/bin/python bench/sandbox_remote.py``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

from _load import concurrent_rate

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "sandbox_service"))
from service_process import SECRET, SandboxService  # noqa: E402

from assay.core.interfaces import CodeCall  # noqa: E402
from assay.sandbox import SandboxRunner  # noqa: E402
from assay.sandbox.node.runtime import find_node, missing_dependencies  # noqa: E402
from assay.sandbox.remote import RemoteCodeRunner  # noqa: E402

ARGS = ["What is 6 x 7?", "It is 42", "It is 42", {"id": 1}]
SOURCES = {
    "python": "def evaluate(input, output, expected, metadata):\n    return {'passed': output == expected}\n",
    "nodejs": "module.exports = (input, output, expected) => ({ passed: output === expected })",
}


def sequential(runner: object, call: CodeCall, n: int) -> list[float]:
    times = []
    for _ in range(n):
        start = time.perf_counter()
        out = runner.call(call)  # type: ignore[attr-defined]
        times.append((time.perf_counter() - start) * 1000)
        assert out.ok, out
    return times


def languages() -> list[str]:
    return ["python"] + (["nodejs"] if find_node() and not missing_dependencies() else [])


def main(argv: list[str] | None = None) -> dict[str, dict[str, float]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=200, help="sequential calls per round and side")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--clients", type=int, default=16, help="concurrent client threads")
    parser.add_argument("--workers", type=int, default=None, help="sandbox workers (default: one per core)")
    opts = parser.parse_args(argv)
    workers = opts.workers or os.cpu_count() or 1
    figures: dict[str, dict[str, float]] = {}
    with SandboxService(args=("--workers", str(workers))) as service, SandboxRunner(size=workers) as local, \
            RemoteCodeRunner(service.url, SECRET) as remote:
        for language in languages():
            call = CodeCall(language, SOURCES[language], ARGS)
            sequential(local, call, 20 * workers)  # warm-up: every worker started on both sides
            sequential(remote, call, 20 * workers)
            here, there = [], []
            for _ in range(opts.rounds):
                here.append(statistics.median(sequential(local, call, opts.calls)))
                there.append(statistics.median(sequential(remote, call, opts.calls)))
            per_client = max(1, opts.calls // opts.clients)
            figures[language] = {
                "local_ms": statistics.median(here), "remote_ms": statistics.median(there),
                "local_rate": concurrent_rate(local, call, opts.clients, per_client),
                "remote_rate": concurrent_rate(remote, call, opts.clients, per_client)}
    print(f"sandbox service over loopback vs the local pool, {workers} workers each on {os.cpu_count()} cores "
          f"(medians of {opts.rounds} rounds of {opts.calls} sequential calls; target: <= 2 ms added)")
    print(f"{'evaluator':<10}{'local ms':>10}{'remote ms':>11}{'added ms':>10}"
          f"{f'local/s x{opts.clients}':>16}{f'remote/s x{opts.clients}':>17}")
    for language, f in figures.items():
        print(f"{language:<10}{f['local_ms']:>10.2f}{f['remote_ms']:>11.2f}{f['remote_ms'] - f['local_ms']:>10.2f}"
              f"{f['local_rate']:>16.0f}{f['remote_rate']:>17.0f}")
    return figures


if __name__ == "__main__":
    main()
