"""`make bench`: every benchmark of the project, one after another, with the machine named.

Figures are medians of several runs; compare them only with runs on the same kind of machine.
"""

from __future__ import annotations

import os
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import e2e  # noqa: E402
import presets  # noqa: E402

TARGETS = {"exact_match": 200_000, "contains": 200_000, "regex": 200_000, "json_schema": 100_000,
           "similarity/levenshtein": 50_000, "similarity/jaccard": 30_000, "similarity/cosine": 30_000}


def machine() -> str:
    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return (f"{platform.system()} {platform.release()}, {os.cpu_count()} cores, {cpu}, "
            f"Python {platform.python_version()}")


def million_levenshtein() -> tuple[float, float]:
    """1,000,000 (output, expected) pairs through grade_batch: seconds, and pairs/s."""
    import assay

    base = presets.make_samples(20_000, seed=5)
    samples = [base[i % len(base)] for i in range(1_000_000)]
    t = time.perf_counter()
    results = assay.grade_batch({"type": "similarity"}, samples)
    elapsed = time.perf_counter() - t
    assert len(results) == 1_000_000
    return elapsed, 1_000_000 / elapsed


def columnar_figures() -> None:
    """bench/columnar.py, when pyarrow (assay[arrow]) is installed."""
    try:
        import columnar
    except ImportError:
        print("\ncolumnar path: pyarrow is not installed (pip install 'assay[arrow]'); not measured")
        return
    print(f"\ncolumnar path, one core, rows/s over {columnar.ROWS:,} rows (median of 5 runs)")
    columnar.report(columnar.main())


def main() -> None:
    print(f"machine: {machine()}\n")
    print("preset graders, one core, samples/s (median of 5 runs over 20,000 generated pairs)")
    print(f"{'grader':24} {'assay':>10} {'target':>10} {'raw library call':>18}")
    for name, graded, raw, label in presets.main():
        print(f"{name:24} {graded:>10,.0f} {TARGETS[name]:>10,} {raw:>18,.0f}  ({label})")
    print("\none core, samples per CPU-second (median of 5 runs over 100,000 dicts)")
    presets.report_dict_batch(presets.dict_batch())
    elapsed, rate = million_levenshtein()
    print(f"\nlevenshtein over 1,000,000 pairs: {elapsed:.1f} s ({rate:,.0f} pairs/s; target < 30 s)")
    columnar_figures()
    print("\n" + e2e.describe(e2e.main()) + "\n")
    import startup  # a one-sample run beside `python -c "import pydantic, yaml"` and the other floors

    print(startup.describe(startup.main()) + "\n")
    import judges
    import sandbox_node
    import sandbox_python
    import sandbox_remote
    import service

    sandbox_python.main([])
    print()
    sandbox_node.main([])
    print()
    import sandbox_speed  # both languages' one-call and batched figures in one table (docs/performance.md)

    sandbox_speed.main([])
    print()
    sandbox_remote.main([])
    print()
    judges.main([])
    print()
    import local_judge  # a real model behind the judges: calls/s, p50/p99 at concurrency 1, 4, 8

    local_judge.main([])
    print()
    service.main([])
    print()
    import upload

    upload.main(["--quick"] if "--quick" in sys.argv else [])
    print()
    import service_run  # a run over 100,000 and 1,000,000 rows: the server's RSS, live view, export

    service_run.main(["--quick"] if "--quick" in sys.argv else [])
    print()
    import pages  # the pages in chromium: page ready, editor test runs

    pages.main([])
    print()
    import fairness  # the sandbox shared between users: a batch through the gate, a test behind slow tests

    fairness.main([])
    print()
    import run_queue  # the run queue on PostgreSQL: one and two servers, two users

    run_queue.main(["--quick"] if "--quick" in sys.argv else [])
    print()
    import online_intake  # POST /v1/traces: spans/s, p99 latency, grading lag, with a 10% rule

    online_intake.main(["--quick"] if "--quick" in sys.argv else [])
    print()
    import scale_out  # N servers on one PostgreSQL: results/s per server, the database's CPU share

    scale_out.main(["--quick"] if "--quick" in sys.argv else [])
    print()
    import flat_memory

    print("assay run, local engine: peak RSS and time at 100,000 and 1,000,000 samples (median of 3 runs)")
    flat_memory.report(flat_memory.main(["--quick"] if "--quick" in sys.argv else []))
    print()
    import compare_stream  # assay compare of two results files of 100,000 and 1,000,000 lines

    print("assay compare --json of two results files: time, CPU and peak RSS (median of 3 runs)")
    compare_stream.report(compare_stream.main(["--quick"] if "--quick" in sys.argv else []))
    print()
    import ray_engine  # skipped with a message when Ray (assay[ray]) is missing

    ray_engine.report(ray_engine.main(["--quick"] if "--quick" in sys.argv else []))


if __name__ == "__main__":
    main()
