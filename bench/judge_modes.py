"""The local toy judge's two decision modes over a labelled set (examples/local-judge: 40
answers, 20 right and 20 wrong): ``scoring: parse`` (the judge writes a JSON verdict, binary
scale) against ``scoring: logprobs`` (yes or no, P(pass) from the first token's probabilities).

For each mode: agreement with the labels (errors count as disagreement and are reported apart),
the area under the ROC curve of its score, and the time per judgment (one call at a time, the
median of the per-call wall times). The judge runs as ``assay judge serve-local`` in a child
process with its defaults (2 threads, OMP_WAIT_POLICY=passive). Figures go to docs/performance.md
("The local toy judge's two decision modes") with the machine and its load.
Run: ``.venv/bin/python bench/judge_modes.py``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

import assay
from assay.core.interfaces import Resources
from assay.judges import OpenAIJudgeClient
from assay.judges.local import LocalJudge

SET = Path(__file__).resolve().parents[1] / "examples" / "local-judge"
MODES = {"parse": {"scale": "binary", "threshold": 0.5, "max_tokens": 80}, "logprobs": {"scoring": "logprobs"}}


def auc(scores: list[float], labels: list[bool]) -> float:
    """The probability that a right answer scores above a wrong one (ties count half)."""
    right = [s for s, ok in zip(scores, labels, strict=True) if ok]
    wrong = [s for s, ok in zip(scores, labels, strict=True) if not ok]
    pairs = [(1.0 if r > w else 0.5 if r == w else 0.0) for r in right for w in wrong]
    return sum(pairs) / len(pairs) if pairs else float("nan")


def measure(url: str, mode: str, rows: list[dict], labels: dict[str, bool]) -> dict[str, float]:
    client = OpenAIJudgeClient(base_url=url, model="local", concurrency=1)
    spec = {"type": "llm_comparison", "config": MODES[mode]}
    try:
        results, times = [], []
        for row in rows:
            start = time.perf_counter()
            results.append(assay.grade(spec, row, resources=Resources(judge_client=client)))
            times.append(time.perf_counter() - start)
    finally:
        client.close()
    truth = [labels[row["id"]] for row in rows]
    agree = sum(1 for r, ok in zip(results, truth, strict=True) if r.status != "error" and r.passed == ok)
    errors = sum(1 for r in results if r.status == "error")
    scores = [r.score if r.score is not None else 0.5 for r in results]
    said_pass = sum(1 for r in results if r.status == "passed")
    return {"agreement": agree / len(rows), "errors": errors, "auc": auc(scores, truth), "said_pass": said_pass,
            "median_s": statistics.median(times), "mean_s": statistics.fmean(times), "n": len(rows)}


def main(argv: list[str] | None = None) -> dict[str, dict[str, float]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=40, help="the first N rows of the set")
    args = parser.parse_args(argv)
    rows = [json.loads(line) for line in (SET / "data.jsonl").read_text().splitlines()][:args.rows]
    labels = {x["sample_id"]: x["passed"] for x in map(json.loads, (SET / "labels.jsonl").read_text().splitlines())}
    figures = {}
    with LocalJudge.start(environ=dict(os.environ)) as judge:
        for mode in MODES:
            figures[mode] = f = measure(judge.url, mode, rows, labels)
            print(f"local judge, scoring: {mode}: agreement {f['agreement']:.0%} ({f['n']} labelled answers; "
                  f"{f['errors']} errors; said pass {f['said_pass']}), AUC {f['auc']:.2f}, "
                  f"{f['median_s']:.2f} s a judgment (median; mean {f['mean_s']:.2f} s)")
    print(f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    return figures


if __name__ == "__main__":
    main()
