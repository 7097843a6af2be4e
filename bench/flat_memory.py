"""`assay run` on the local engine at 100,000 and 1,000,000 samples: peak memory (RSS) and time,
each measurement in a fresh process, the median of several runs.

Two suites over the same generated JSONL (bench/ray_engine.py's rows, ~530 bytes each):
- columnar: exact_match, regex, similarity, json_schema, all with columnar kernels, so the
  run grades Arrow columns chunk by chunk (the path preset suites take when pyarrow is there);
- object: the same with a regex RE2 cannot run (a backreference), so every grader takes the
  object path (a Sample and a GraderResult per row).
Each run writes ``--out`` (JSONL), ``--junit`` and ``--summary-json``, as a CI run would.

    python bench/flat_memory.py [--quick | --sizes 100000,1000000] [--suites columnar,object] [--runs N]
                                [--runs-large N]

``--quick`` measures 10,000 and 100,000 samples instead; ``--runs-large`` is the number of runs
at the largest size (default: ``--runs``, 3).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

import ray_engine  # noqa: E402  (its dataset generator and preset graders)

OBJECT = ray_engine.PRESETS.replace('config: {pattern: "(?:capital|首都)\\\\s*\\\\S+", flags: i}',
                                    'config: {pattern: "(\\\\w)\\\\1"}')
SUITES = {"columnar": ray_engine.PRESETS, "object": OBJECT}
MEASURE = """
import json, resource, sys, time
from pathlib import Path
from assay.cli.run_cmd import execute
work = Path(sys.argv[1])
t = time.perf_counter()
execute(work / sys.argv[2], out=work / "out.jsonl", junit=work / "junit.xml", results=None, threshold=None,
        concurrency=2, resume=False, cost_ordered=None, summary_json=work / "summary.json", quiet=True)
print(json.dumps({"seconds": time.perf_counter() - t,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def run_once(work: Path, suite: str, rows: int) -> dict:
    """One `assay run` in a fresh process: its seconds and peak RSS."""
    done = subprocess.run([sys.executable, "-c", MEASURE, str(work), suite], capture_output=True, text=True,
                          timeout=7200)
    if done.returncode not in (0, 1) or not done.stdout.strip():
        raise RuntimeError(f"{suite} over {rows} samples failed: {done.stderr[-2000:]}")
    total = json.loads((work / "summary.json").read_text())["total"]
    if total != rows:
        raise RuntimeError(f"{suite} graded {total} samples of {rows}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str]) -> Iterator[tuple[str, int, int, float, float]]:
    """``(suite, samples, runs, median seconds, median peak RSS in MB)`` for each measurement,
    as each is taken."""
    sizes = (10_000, 100_000) if "--quick" in argv else (100_000, 1_000_000)
    if "--sizes" in argv:
        sizes = tuple(int(n) for n in argv[argv.index("--sizes") + 1].split(","))
    suites = argv[argv.index("--suites") + 1].split(",") if "--suites" in argv else list(SUITES)
    runs = int(argv[argv.index("--runs") + 1]) if "--runs" in argv else 3
    runs_large = int(argv[argv.index("--runs-large") + 1]) if "--runs-large" in argv else runs
    with tempfile.TemporaryDirectory(prefix="assay-flat-bench-") as tmp:
        work = Path(tmp)
        for name, graders in SUITES.items():
            (work / f"{name}.yaml").write_text(f"name: {name}\ndataset: data.jsonl\ngraders:\n{graders}",
                                               encoding="utf-8")
        for rows in sizes:
            ray_engine.write_dataset(work / "data.jsonl", rows)
            n = runs_large if rows == sizes[-1] else runs
            for name in suites:
                got = [run_once(work, f"{name}.yaml", rows) for _ in range(n)]
                yield (name, rows, n, statistics.median(g["seconds"] for g in got),
                       statistics.median(g["peak_rss_mb"] for g in got))


def report(rows: Iterable[tuple[str, int, int, float, float]]) -> None:
    print(f"{'suite':10} {'samples':>10} {'runs':>5} {'seconds':>8} {'samples/s':>10} {'peak RSS':>10}", flush=True)
    for name, n, runs, seconds, rss in rows:
        print(f"{name:10} {n:>10,} {runs:>5} {seconds:>8.1f} {n / seconds:>10,.0f} {rss:>7,.0f} MB", flush=True)


if __name__ == "__main__":
    print("assay run, local engine: peak RSS and time (JSONL in, --out, --junit and --summary-json written; "
          "median of the runs shown)")
    report(main(sys.argv[1:]))
