"""Judge throughput with a real model: calls per second and p50/p99 latency at concurrency 1, 4
and 8 against the local toy judge (``assay judge serve-local``: SmolLM2-135M through llama.cpp,
2 threads, 4 parallel slots), beside the same harness against the tests' scripted server
(tests/judge_server.py answering every call in 50 ms).

Each call is what an ``llm`` grader with ``scoring: logprobs`` sends (the fenced prompt, one
token and its alternatives), over different answers, so the model's prompt cache helps only
with the shared instructions. Few calls per level: the machine is shared. Skipped with a
message when ``assay[local-judge]`` is not installed. Run: ``.venv/bin/python bench/local_judge.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import assay
from assay.core.interfaces import Resources
from assay.judges import OpenAIJudgeClient
from assay.judges.local import LocalJudge
from assay.judges.local.find import available

HERE = Path(__file__).resolve().parent
ROWS = [json.loads(line) for line in (HERE.parent / "examples" / "local-judge" / "data.jsonl").read_text().splitlines()]
SPEC = {"type": "llm_comparison", "config": {"scoring": "logprobs"}}
SCRIPTED = f"""
import sys, json, math
sys.path.insert(0, {str(HERE.parent / "tests")!r})
from judge_server import JudgeServer, logprobs, slow
with JudgeServer(default=slow(0.05, logprobs({{"yes": 0.6, "no": 0.4}}))) as server:
    print(server.url, flush=True)
    sys.stdin.read()
"""


def level(url: str, model: str, concurrency: int, calls: int) -> dict[str, float]:
    """``calls`` gradings, ``concurrency`` at a time, each a grader's one call."""
    client = OpenAIJudgeClient(base_url=url, api_key="bench", model=model, concurrency=concurrency, cache=None)
    resources = Resources(judge_client=client)
    latencies: list[float] = []

    def one(i: int) -> None:
        start = time.perf_counter()
        result = assay.grade(SPEC, ROWS[i % len(ROWS)], resources=resources)
        latencies.append(time.perf_counter() - start)
        if result.status == "error":
            raise SystemExit(f"a judge call failed: {result.reason}")

    try:
        one(0)  # connect and warm the prompt cache outside the timing
        latencies.clear()
        start = time.perf_counter()
        with ThreadPoolExecutor(concurrency) as pool:
            list(pool.map(one, range(1, calls + 1)))
        wall = time.perf_counter() - start
    finally:
        client.close()
    ordered = sorted(latencies)
    return {"calls_s": calls / wall, "p50_ms": statistics.median(ordered) * 1000,
            "p99_ms": ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))] * 1000}


def table(label: str, url: str, model: str, calls: int) -> dict[int, dict[str, float]]:
    rows = {}
    for concurrency in (1, 4, 8):
        rows[concurrency] = f = level(url, model, concurrency, max(calls, concurrency * 2))
        print(f"  {label:<28} concurrency {concurrency}: {f['calls_s']:6.2f} calls/s, "
              f"p50 {f['p50_ms']:7.1f} ms, p99 {f['p99_ms']:7.1f} ms")
    return rows


def main(argv: list[str] | None = None) -> dict[str, dict[int, dict[str, float]]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=16, help="calls per concurrency level")
    args = parser.parse_args(argv)
    print(f"judge throughput, one decision call (scoring: logprobs) per grading; load average "
          f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    figures = {}
    scripted = subprocess.Popen([sys.executable, "-c", SCRIPTED], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                text=True)
    try:
        assert scripted.stdout is not None
        figures["scripted"] = table("scripted server (50 ms)", scripted.stdout.readline().strip(), "judge-test",
                                    args.calls)
    finally:
        assert scripted.stdin is not None
        scripted.stdin.close()
        scripted.wait(timeout=10)
    missing = available()
    if missing is not None:
        print(f"  local judge: skipped ({missing})")
        return figures
    with LocalJudge.start(environ=dict(os.environ)) as judge:
        figures["local"] = table("local judge (SmolLM2-135M)", judge.url, judge.model, args.calls)
    return figures


if __name__ == "__main__":
    main()
