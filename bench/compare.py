"""The comparison of two runs of 5,000 samples × 3 evaluators, as the compare page asks for it:
``GET /api/v1/runs/{a}/compare/{b}`` against a real ``assay serve`` (its own throwaway SQLite
database on a free 127.0.0.1 port, stopped by its pid). The two runs grade two versions of one
dataset whose outputs differ in about one sample in nine (flips both ways). Prints the median of
``--rounds`` requests after one warm-up, against the issue's target (300 ms).
Run: ``.venv/bin/python bench/compare.py [--samples 5000] [--rounds 7]``.

Measured 2026-11-28 on the shared 2-core machine, load average 5 to 6, 5 rounds each, this tree
against main's (its venv running this script): median 992 and 1344 ms here, 1281 and 1212 ms on
main; the comparison alone, in process, ~1.1 s here against ~1.4 s on main. The target is not
met: reading and judging 30,000 results (ORM rows, a GraderResult each, garbage collection)
dominates, not the statistics. After merging main's streamed comparison (its bounded interval in
place of the bootstrap): median 729, 559 and 559 ms at load 4 to 4.6.

2026-11-28, later (issue 36 item 3, not met): profiled in process (cProfile), the comparison
spent a third of its time building a GraderResult per stored result, and a fifth in the
ORM's row loading. Results are now read as plain rows (the connection, not the ORM) into light
records, and the reason of a passed result is not read. The comparison alone, in process, on
one database, alternating this tree and main's four times (5 rounds each) at load 11.6 to
12.5: medians 1215, 1594, 1502, 1725 ms here against 1831, 2020, 2088, 2380 ms on main (about
30% less); at load 6 to 7, 580 to 630 ms here against 725 ms on main. What is left: SQLite's
fetch and the JSON column's processing (~0.2 s), and the per-sample tallies of
``core.compare`` in Python (~0.3 s); the next step is a per-run verdict table written when a
run finishes, compared with numpy, the flips' reasons read for the flipped samples only.

2026-11-29 (issue 36 item 8): that step, taken. Each run's verdicts are kept as columns when it
completes (``run_verdicts``, migration 0016, written with its summary: 10-20 ms more for 5,000
samples; a run finished before gets its table at its first comparison), the two tables are
compared with numpy (``core.compare_columns``), the flips' reasons read for the flipped samples
only, and the route writes its answer with pydantic once (returned as a model, FastAPI dumped,
checked and serialised it again, then ``json.dumps``). Same answer to the last digit
(``tests/service/test_compare_tables.py``). Alternating main's tree (e15f006) and this one,
three times each, 7 rounds each, in two sessions at load 5.3 to 7.3: medians 1580, 337, 285
and 974, 491, 370 ms on main; 417, 167, 137 and 431, 350, 169 ms here (the first answer 192 to
358 ms: the tables were written at completion). The server's CPU per answer, which moves with
the load far less (utime + stime of the ``assay serve`` process, median of 9 at load 5.8 to
7.6): 420 ms on main, 170 ms here. So the target is met while the load leaves the server about
a core (137-169 ms at load 5 to 6), not at load 7 and more on these 2 cores (350-431 ms). What
is left of the 170 ms: the flips' reasons (reading ~4,800 results and saying ~6,400 reasons,
~60 ms), checking and writing the 2.8 MB answer with pydantic (~40 ms), the statistics and the
columns (~20 ms). In process, two runs finished before the tables existed compare in ~420 ms
the first time (both tables made and stored), against ~600 ms reading every result."""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "service"))
sys.path.insert(0, str(HERE.parent / "tests" / "pages"))
from pages_support import serving  # noqa: E402

TARGET_MS = 300.0


def rows(samples: int, version: int) -> bytes:
    out = []
    for i in range(samples):
        right = (i % 9 != version) if i % 3 else (i % 7 != version)
        out.append({"id": f"s{i:05d}", "input": f"问题 {i}", "output": "北京是中国的首都" if right else "上海",
                    "expected": "北京是中国的首都"})
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in out).encode()


def finished(api, task_id: str) -> str:
    run = api.post(f"/tasks/{task_id}/runs").json()["data"]
    while run["status"] in ("queued", "running"):
        time.sleep(0.2)
        run = api.get(f"/runs/{run['id']}").json()["data"]
    assert run["status"] == "completed", run
    return run["id"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=7)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder, serving(Path(folder)) as live, live.api() as api:
        presets = {p["config"]["presetType"]: p["id"] for p in api.get("/evaluators/presets").json()["data"]}
        dataset = api.post("/datasets", json={"name": "compare bench"}).json()["data"]
        task = api.post("/tasks", json={"name": "compare bench", "datasetId": dataset["id"], "evaluators": [
            {"evaluatorId": presets[k]} for k in ("exact_match", "contains", "similarity")]}).json()["data"]
        runs = []
        for version in (1, 2):
            uploaded = api.post(f"/datasets/{dataset['id']}/versions", params={"filename": "d.jsonl"},
                                content=rows(options.samples, version))
            assert uploaded.status_code == 200, uploaded.text
            runs.append(finished(api, task["id"]))
        path = f"/runs/{runs[0]}/compare/{runs[1]}"
        started = time.perf_counter()
        first = api.get(path).json()["data"]
        cold = (time.perf_counter() - started) * 1000
        flips = {g["grader"]: len(g["flips"]) for g in [*first["graders"], first["overall"]]}
        took = []
        for _ in range(options.rounds):
            started = time.perf_counter()
            answer = api.get(path)
            took.append((time.perf_counter() - started) * 1000)
            assert answer.status_code == 200
        median = statistics.median(took)
        print(f"compare {options.samples} samples x 3 evaluators: median {median:.0f} ms over {options.rounds} "
              f"(min {min(took):.0f}, max {max(took):.0f}; the first {cold:.0f}); "
              f"answer {len(answer.content) / 1e6:.1f} MB; "
              f"flips {flips}; target {TARGET_MS:.0f} ms: {'met' if median <= TARGET_MS else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
