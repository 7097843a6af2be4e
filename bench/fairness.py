"""Sharing the sandbox between users (``service/fairness.py``), measured in one run:

- a batch through the gate: 2,000 one-line Python samples of one user through ``FairCodeRunner``
  (pieces paced by their speed) against the same batch straight to the sandbox; samples/s;
- a test behind another user's slow tests: bob's one quick ``/test`` of a code evaluator while
  alice's six tests of 0.5 s each hold the sandbox, against bob's test alone; ms. Fair sharing
  keeps it within about one of alice's evaluations (500 ms), not behind all of them.
Each figure is the median of ``--rounds`` rounds; the load average is printed before and after.
Run: ``.venv/bin/python bench/fairness.py [--rounds 5]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent.parent / "tests" / "service"))
from service_support import make_api  # noqa: E402

from assay.core.interfaces import CodeBatch  # noqa: E402
from assay.runner.resources import build_resources  # noqa: E402
from assay.sandbox.python.pool import PythonPool  # noqa: E402
from assay.service.fairness import FairCodeRunner, FairGate, acting_for  # noqa: E402
from assay.settings import Settings  # noqa: E402

FAST = "def evaluate(input, output, expected, metadata):\n    return {'passed': output == expected}\n"
SLOW = ("import time\n\ndef evaluate(input, output, expected, metadata):\n"
        "    time.sleep(float(metadata.get('pause', 0)))\n    return {'passed': output == expected}\n")


def batch_rates(rounds: int, samples: int = 2000) -> tuple[float, float]:
    """Samples/s of one batch straight to the sandbox and through the gate (medians)."""
    pool = PythonPool()
    fair = FairCodeRunner(pool, FairGate(os.cpu_count() or 1, 2), owns_inner=False)
    batch = CodeBatch("python", FAST, [["q", str(i), str(i), {}] for i in range(samples)], "evaluate", 5000, 256)
    times: dict[str, list[float]] = {"raw": [], "gate": []}
    with acting_for("alice"):
        pool.call_batch(batch)  # warm-up
        for _ in range(rounds):
            for name, runner in (("raw", pool), ("gate", fair)):
                began = time.perf_counter()
                assert all(o.error is None for o in runner.call_batch(batch))
                times[name].append(time.perf_counter() - began)
    pool.close()
    return samples / statistics.median(times["raw"]), samples / statistics.median(times["gate"])


def test_waits(rounds: int) -> tuple[float, float]:
    """bob's /test latency alone and behind alice's slow tests, ms (medians)."""
    resources = build_resources(Settings.from_env({"ASSAY_JUDGE_CACHE": "off"}))
    alone: list[float] = []
    behind: list[float] = []
    for _ in range(rounds + 1):  # the first round warms up
        apps = make_api(f"sqlite:///{tempfile.mkdtemp(prefix='assay-bench-fair-')}/a.db", resources)
        api = next(apps)
        ids = {user: api.call("POST", "/evaluators", user, json={"name": "s", "type": "code", "config": {
            "language": "python", "code": SLOW}}).json()["data"]["id"] for user in ("alice", "bob")}

        def test(user: str, pause: float) -> float:
            began = time.perf_counter()
            reply = api.call("POST", f"/evaluators/{ids[user]}/test", user,
                             json={"input": "q", "output": "a", "expected": "a", "metadata": {"pause": pause}})
            assert reply.status_code == 200, reply.text
            return (time.perf_counter() - began) * 1000

        first = test("bob", 0)
        with ThreadPoolExecutor(8) as pool:
            slow = [pool.submit(test, "alice", 0.5) for _ in range(2)]
            time.sleep(0.2)
            slow += [pool.submit(test, "alice", 0.5) for _ in range(4)]  # queued meanwhile: one batch
            time.sleep(0.7)
            waited = test("bob", 0)
            for future in slow:
                future.result()
        if _ > 0:
            alone.append(first)
            behind.append(waited)
        apps.close()
    resources.code_runner.close()
    resources.judge_client.close()
    return statistics.median(alone), statistics.median(behind)


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    rounds = parser.parse_args(argv).rounds
    print(f"sandbox shared between users (median of {rounds}; load {os.getloadavg()[0]:.1f})")
    raw, gated = batch_rates(rounds)
    print(f"  one user's batch of 2,000: {gated:,.0f} samples/s through the gate, {raw:,.0f} straight to the sandbox")
    alone, behind = test_waits(rounds)
    print(f"  bob's /test: {alone:.0f} ms alone, {behind:.0f} ms while alice's six 0.5 s tests run"
          f" (load {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main(sys.argv[1:])
