"""No user holds the sandbox (issue 35 item 5, issue 36 item 6), measured through a live server.

The service under uvicorn on 127.0.0.1 with its own sandbox (as ``assay serve`` builds it); bob
tests a one-line Python evaluator in the editor (``POST /pages/api/evaluators/test``, a draft):

- alone;
- while four of alice's evaluators sleep to their 5 s limit (four ``/test`` calls at once; one
  of bob's tests per round, once they are in the sandbox);
- while alice's run of busy loops (``while True: pass``, 5 s limit) grades (bob tests every
  0.3 s while it runs; the run is cancelled after ``--busy-s``).

Each figure is the median of bob's answers in ms (the HTTP round trip), with what the answers
reported (``latencyMs``, the evaluation's own time, and ``waitMs``, when the server has it);
``uptime``'s load before and after. ``--no-demote`` leaves long code at normal CPU priority;
``--busy-runs 2`` adds root's busy-loop run beside alice's (four busy loops on the cores).
Run: ``.venv/bin/python bench/sandbox_share.py``. Against another tree:
``PYTHONPATH=that/src .venv/bin/python bench/sandbox_share.py``.
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx2 as httpx
import uvicorn

sys.path.insert(0, str(Path(__file__).parent.parent / "tests" / "service"))
from pg_server import free_port  # noqa: E402
from service_support import seed_users  # noqa: E402

from assay.server import create_app  # noqa: E402
from assay.settings import Settings  # noqa: E402

ONE_LINER = "def evaluate(input, output, expected, metadata):\n    return {'passed': output == expected}\n"
SLEEPER = "import time\n\ndef evaluate(input, output, expected, metadata):\n    time.sleep(30)\n"
HEAVY = ("def evaluate(input, output, expected, metadata):\n"
         "    return {'passed': sum(i * i for i in range(300_000)) > 0 and output == expected}\n")
"""bob's evaluator that computes for a while (some tens of ms): one that lowering long code helps."""
BUSY = "def evaluate(input, output, expected, metadata):\n    while True:\n        pass\n"


class Server:
    def __init__(self) -> None:
        url = f"sqlite:///{tempfile.mkdtemp(prefix='assay-bench-share-')}/a.db"
        tokens = seed_users(url)
        self.app = create_app(Settings(database_url=url, queue_poll_ms=50))
        port = free_port()
        self.server = uvicorn.Server(uvicorn.Config(self.app, host="127.0.0.1", port=port, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)
        self.thread.start()
        while not self.server.started:
            time.sleep(0.02)
        self.clients = {u: httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=300,
                                        headers={"Authorization": f"Bearer {t}"}) for u, t in tokens.items()}

    def evaluator(self, user: str, code: str) -> str:
        return self.clients[user].post("/api/v1/evaluators", json={"name": "e", "type": "code", "config": {
            "language": "python", "code": code, "timeout": 5000}}).json()["data"]["id"]

    def bob(self, code: str = ONE_LINER) -> tuple[float, dict[str, Any]]:
        began = time.perf_counter()
        reply = self.clients["bob"].post("/pages/api/evaluators/test", json={
            "name": "draft", "type": "code", "config": {"language": "python", "code": code, "timeout": 5000},
            "input": "q", "output": "a", "expected": "a", "metadata": {}})
        took = (time.perf_counter() - began) * 1000
        data = reply.json()["data"]
        assert data["passed"] is True, data
        return took, data

    def in_flight(self) -> int:
        return sum(self.app.state.service.gate.in_flight().values())

    def close(self) -> None:
        self.server.should_exit = True
        self.thread.join(30)


def summary(name: str, got: list[tuple[float, dict[str, Any]]]) -> str:
    took = statistics.median(t for t, _ in got)
    own = statistics.median(d["latencyMs"] for _, d in got)
    wait = f", waitMs {statistics.median(d['waitMs'] for _, d in got):.1f}" if "waitMs" in got[0][1] else ""
    return f"  {name}: {took:.1f} ms (n={len(got)}; reported latencyMs {own:.1f}{wait})"


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--busy-s", type=float, default=12.0)
    parser.add_argument("--busy-runs", type=int, choices=(1, 2), default=1)
    parser.add_argument("--no-demote", action="store_true", help="leave long code at normal CPU priority, "
                                                                  "to see what lowering it buys")
    args = parser.parse_args(argv)
    if args.no_demote:
        import assay.sandbox.priority as priority

        priority.DEMOTE_AFTER_S = None  # type: ignore[assignment]  # read when the server opens its sandbox
    print("load before:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    server = Server()
    print(f"  settings: {dataclasses.asdict(server.app.state.service.settings).get('sandbox_workers', 'n/a')} "
          f"sandbox workers set, gate slots {server.app.state.service.gate.slots}")
    server.bob()  # warm-up
    print(summary("bob alone", [server.bob() for _ in range(args.rounds)]))
    print(summary("bob's computing evaluator alone", [server.bob(HEAVY) for _ in range(args.rounds)]))
    sleepers = [server.evaluator("alice", SLEEPER) for _ in range(4)]
    under_sleep = []
    with ThreadPoolExecutor(4) as pool:
        for _ in range(args.rounds):
            held = [pool.submit(server.clients["alice"].post, f"/api/v1/evaluators/{e}/test",
                                json={"input": "q", "output": "a", "expected": "a"}) for e in sleepers]
            while server.in_flight() < 2:
                time.sleep(0.01)
            time.sleep(0.2)
            under_sleep.append(server.bob())
            for future in held:
                future.result()
    print(summary("bob under alice's four sleepers", under_sleep))
    runs = []
    for user in ("alice", "root")[:args.busy_runs]:
        busy = server.evaluator(user, BUSY)
        client = server.clients[user]
        task = client.post("/api/v1/tasks", json={"name": "runaway", "evaluators": [{"evaluatorId": busy}], "dataset": {
            "rows": [{"id": f"r{i}", "output": "x", "expected": "x"} for i in range(30)]}}).json()["data"]["id"]
        runs.append((client, client.post(f"/api/v1/tasks/{task}/runs").json()["data"]["id"]))
    while server.in_flight() < args.busy_runs:
        time.sleep(0.01)
    time.sleep(0.3)
    under_busy, heavy_under_busy = [], []
    ends = time.monotonic() + args.busy_s
    while time.monotonic() < ends:
        under_busy.append(server.bob())
        time.sleep(0.15)
        heavy_under_busy.append(server.bob(HEAVY))
        time.sleep(0.15)
    for client, run in runs:
        client.post(f"/api/v1/runs/{run}/cancel")
    print(summary(f"bob under {args.busy_runs} busy-loop run(s)", under_busy))
    print(summary(f"bob's computing evaluator under {args.busy_runs} busy-loop run(s)", heavy_under_busy))
    print("load after:", subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip())
    server.close()


if __name__ == "__main__":
    main(sys.argv[1:])
