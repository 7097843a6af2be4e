"""`assay compare` of two large results files: peak memory (RSS) and time, each in a fresh
process, the median of several runs.

The files are generated here: ``rows`` samples graded by three graders (two pass/fail, one
scored), ~400 bytes a line as `assay run --out` writes them; the new run flips about 3% of
each grader's outcomes (more to fail than to pass) and each file holds 100 samples the other
lacks.

    python bench/compare_stream.py [--quick | --sizes 100000,1000000] [--runs N]

``--quick`` measures 10,000 and 100,000 lines instead.
"""

from __future__ import annotations

import json
import random
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import orjson

GRADERS = (("exact", "exact_match"), ("has", "contains"), ("judge", "llm_judge"))
MEASURE = """
import json, resource, sys, time
from assay.cli.main import app
t = time.perf_counter()
try:
    app(["compare", sys.argv[1], sys.argv[2], "--json"], standalone_mode=False)
except SystemExit:
    pass
use = resource.getrusage(resource.RUSAGE_SELF)
print(json.dumps({"seconds": time.perf_counter() - t, "cpu_seconds": use.ru_utime + use.ru_stime,
                  "peak_rss_mb": use.ru_maxrss / 1024}), file=sys.stderr)
"""


def _line(sample: int, outcome: tuple[bool, bool, float], prefix: str = "s") -> bytes:
    results = []
    for (name, kind), passed in zip(GRADERS, (outcome[0], outcome[1], outcome[2] >= 0.5), strict=True):
        score = outcome[2] if name == "judge" else float(passed)
        results.append({"name": name, "type": kind, "kind": "llm" if name == "judge" else "code",
                        "status": "passed" if passed else "failed", "passed": passed, "score": score,
                        "reason": None if passed else f"{name} said no to sample {sample}",
                        "details": {}, "error": None, "latency_ms": 0.1, "weight": 1.0})
    ok = all(r["passed"] for r in results)
    return orjson.dumps({"id": f"{prefix}{sample:07d}", "status": "passed" if ok else "failed", "passed": ok,
                         "score": sum(r["score"] for r in results) / 3, "results": results,
                         "fingerprint": "0123456789abcdef"}) + b"\n"


def write_pair(work: Path, rows: int, seed: int = 7) -> tuple[Path, Path]:
    """Two results files of ``rows`` lines each (see the module's docstring)."""
    rng = random.Random(seed)
    base, new = work / f"base-{rows}.jsonl", work / f"new-{rows}.jsonl"
    if base.exists() and new.exists():
        return base, new

    def flip(value: bool) -> bool:
        return (not value) if rng.random() < (0.04 if value else 0.02) else value

    with base.open("wb") as b, new.open("wb") as n:
        for i in range(rows - 100):
            was = (rng.random() < 0.8, rng.random() < 0.7, rng.random())
            now = (flip(was[0]), flip(was[1]), min(1.0, max(0.0, was[2] + rng.gauss(-0.01, 0.05))))
            b.write(_line(i, was))
            n.write(_line(i, now))
        for i in range(100):
            b.write(_line(i, (True, True, 1.0), "base-only-"))
            n.write(_line(i, (True, True, 1.0), "new-only-"))
    return base, new


def run_once(base: Path, new: Path) -> dict:
    done = subprocess.run([sys.executable, "-c", MEASURE, str(base), str(new)], capture_output=True, text=True,
                          timeout=3600)
    try:
        figures = json.loads(done.stderr.strip().splitlines()[-1])
        doc = json.loads(done.stdout)
    except (ValueError, IndexError):
        raise RuntimeError(f"assay compare failed: {done.stderr[-2000:]}") from None
    if doc["unpaired"]["base_only"][:1] != ["base-only-0000000"]:
        raise RuntimeError("the comparison lost the unpaired samples")
    return figures


def main(argv: list[str]) -> Iterator[tuple[int, float, float, float]]:
    """(lines, median seconds, median CPU seconds, median peak RSS in MB) for each size."""
    sizes = [10_000, 100_000] if "--quick" in argv else [100_000, 1_000_000]
    if "--sizes" in argv:
        sizes = [int(s) for s in argv[argv.index("--sizes") + 1].split(",")]
    runs = int(argv[argv.index("--runs") + 1]) if "--runs" in argv else 3
    with tempfile.TemporaryDirectory(prefix="assay-compare-bench-") as tmp:
        for rows in sizes:
            base, new = write_pair(Path(tmp), rows)
            got = [run_once(base, new) for _ in range(runs)]
            yield (rows, statistics.median(g["seconds"] for g in got), statistics.median(g["cpu_seconds"] for g in got),
                   statistics.median(g["peak_rss_mb"] for g in got))
            base.unlink()
            new.unlink()


def report(rows: Iterator[tuple[int, float, float, float]]) -> None:
    print(f"{'lines per file':>15} {'seconds':>9} {'CPU s':>7} {'peak RSS MB':>12}   "
          "(targets at 1,000,000: 20 s, 500 MB)")
    for lines, seconds, cpu, rss in rows:
        print(f"{lines:>15,} {seconds:>9.1f} {cpu:>7.1f} {rss:>12.0f}")


if __name__ == "__main__":
    print("assay compare --json of two results files: time and peak RSS (median of the runs)")
    report(main(sys.argv[1:]))
