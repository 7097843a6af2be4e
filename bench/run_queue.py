"""The run queue on PostgreSQL: run throughput with one and with two ``assay serve`` processes
on one database (and the ratio), and fairness between two users: a one-sample run's
time-to-done while another user's large run goes on, against its time alone.

Starts a throwaway PostgreSQL (``tests/service/pg_server.py``: the machine's PostgreSQL 15
binaries), makes the user and token with the real CLI, starts the servers on free 127.0.0.1
ports, each in its own working directory, and drives them over HTTP. Throughput: a task of
``--rows`` samples graded by exact_match and contains, started ``--rounds`` times, results/s
from start to ``completed`` (median). Every process started is stopped by its pid.
Run: ``.venv/bin/python bench/run_queue.py [--quick]``.
"""

from __future__ import annotations

import argparse
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx2 as httpx

sys.path.insert(0, str(Path(__file__).parent.parent / "tests" / "service"))
from pg_server import PostgresServer, free_port, missing  # noqa: E402

SLOW = ("import time\n\ndef evaluate(input, output, expected, metadata):\n"
        "    time.sleep(0.005)\n    return {'passed': output == expected}\n")


def cli(*args: str, env: dict[str, str], cwd: str) -> str:
    done = subprocess.run([sys.executable, "-m", "assay.cli.main", *args], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=300, check=True)
    return done.stdout


class Fleet:
    """``n`` servers on one database, each in its own folder."""

    def __init__(self, url: str, n: int, **extra: str) -> None:
        self.root = Path(tempfile.mkdtemp(prefix="assay-bench-queue-"))
        self.env = {**os.environ, "ASSAY_DATABASE_URL": url, "ASSAY_JUDGE_CACHE": "off",
                    "ASSAY_QUEUE_POLL_MS": "100", **extra}
        cli("users", "create", "alice", env=self.env, cwd=str(self.root))
        cli("users", "create", "bob", env=self.env, cwd=str(self.root))
        self.tokens = {user: cli("tokens", "create", user, env=self.env, cwd=str(self.root)).strip().splitlines()[-1]
                       for user in ("alice", "bob")}
        self.ports = [free_port() for _ in range(n)]
        self.processes = []
        for i, port in enumerate(self.ports):
            folder = self.root / f"server{i}"
            folder.mkdir()
            with open(folder / "server.log", "ab") as log:
                self.processes.append(subprocess.Popen(
                    [sys.executable, "-m", "assay.cli.main", "serve", "--port", str(port), "--log-level", "warning"],
                    env=self.env, cwd=folder, stdout=log, stderr=subprocess.STDOUT))
        for user in self.tokens:
            with self.client(user) as client:
                self._ready(client)

    def client(self, user: str, server: int = 0) -> httpx.Client:
        return httpx.Client(base_url=f"http://127.0.0.1:{self.ports[server]}/api/v1", timeout=60,
                            headers={"Authorization": f"Bearer {self.tokens[user]}"})

    def _ready(self, client: httpx.Client) -> None:
        deadline = time.monotonic() + 120
        for i in range(len(self.ports)):
            while True:
                assert time.monotonic() < deadline, "the servers did not start"
                try:
                    if client.get(f"http://127.0.0.1:{self.ports[i]}/api/v1/evaluators").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                time.sleep(0.1)

    def stop(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                os.kill(process.pid, signal.SIGTERM)
        for process in self.processes:
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.kill(process.pid, signal.SIGKILL)
                process.wait(timeout=10)


def task(client: httpx.Client, rows: int, evaluators: list[str], pause: bool = False) -> str:
    data = [{"id": f"s{i}", "input": "q", "output": f"a{i % 7}", "expected": "a1"} for i in range(rows)]
    made = client.post("/tasks", json={"name": "bench", "dataset": {"rows": data},
                                       "evaluators": [{"evaluatorId": e} for e in evaluators]})
    made.raise_for_status()
    return made.json()["data"]["id"]


def presets(client: httpx.Client) -> list[str]:
    kinds = {p["config"]["presetType"]: p["id"] for p in client.get("/evaluators/presets").json()["data"]}
    return [kinds["exact_match"], kinds["contains"]]


def run_to_done(client: httpx.Client, task_id: str) -> tuple[float, dict[str, Any]]:
    start = time.perf_counter()
    run_id = client.post(f"/tasks/{task_id}/runs").json()["data"]["id"]
    while (run := client.get(f"/runs/{run_id}").json()["data"])["status"] in ("queued", "running"):
        time.sleep(0.02)
    assert run["status"] == "completed", run
    return time.perf_counter() - start, run


def throughput(pg: PostgresServer, servers: int, rows: int, rounds: int) -> float:
    fleet = Fleet(pg.new_database(), servers)
    try:
        with fleet.client("alice") as client:
            task_id = task(client, rows, presets(client))
            run_to_done(client, task_id)  # warm: every server's first run starts its graders
            rates = []
            for _ in range(rounds):
                elapsed, run = run_to_done(client, task_id)
                rates.append(run["total"] / elapsed)
        return statistics.median(rates)
    finally:
        fleet.stop()


def fairness(pg: PostgresServer, rows: int, rounds: int) -> tuple[float, float]:
    """One server: bob's one-sample run alone, then while alice's large run goes on (medians, s)."""
    fleet = Fleet(pg.new_database(), 1, ASSAY_RUN_SLICE_SIZE="64")
    try:
        with fleet.client("alice") as alice, fleet.client("bob") as bob:
            code = alice.post("/evaluators", json={"name": "slow", "type": "code",
                                                   "config": {"language": "python", "code": SLOW}}).json()["data"]
            big = task(alice, rows, [code["id"], *presets(alice)])
            small = task(bob, 1, presets(bob))
            run_to_done(bob, small)  # warm
            alone = statistics.median(run_to_done(bob, small)[0] for _ in range(rounds))
            shared = []
            for _ in range(rounds):
                run_id = alice.post(f"/tasks/{big}/runs").json()["data"]["id"]
                while alice.get(f"/runs/{run_id}").json()["data"]["done"] == 0:
                    time.sleep(0.02)
                shared.append(run_to_done(bob, small)[0])
                alice.post(f"/runs/{run_id}/cancel")
        return alone, statistics.median(shared)
    finally:
        fleet.stop()


def size_options(parser: argparse.ArgumentParser) -> None:
    """``--quick``, ``--rows`` and ``--rounds``, as this bench and ``scale_out`` take them."""
    parser.add_argument("--quick", action="store_true", help="fewer rows and rounds")
    parser.add_argument("--rows", type=int, default=None)
    parser.add_argument("--rounds", type=int, default=None)


def sizes(args: argparse.Namespace) -> tuple[int, int]:
    """Rows of the task and rounds of runs: the options', else 2,000 x 1 (quick) or 10,000 x 3."""
    return args.rows or (2_000 if args.quick else 10_000), args.rounds or (1 if args.quick else 3)


def main(argv: list[str] | None = None) -> dict[str, float] | None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    size_options(parser)
    args = parser.parse_args(argv)
    problem = missing()
    if problem:
        print(f"run queue: {problem}; not measured")
        return None
    rows, rounds = sizes(args)
    pg = PostgresServer().start()
    try:
        one = throughput(pg, 1, rows, rounds)
        two = throughput(pg, 2, rows, rounds)
        alone, shared = fairness(pg, rows, rounds)
    finally:
        pg.stop()
    figures = {"one": one, "two": two, "ratio": two / one, "alone": alone, "shared": shared}
    print(f"run queue on PostgreSQL, {rows:,} samples x 2 presets, results/s from start to completed "
          f"(median of {rounds}): one server {one:,.0f}, two servers {two:,.0f} (x{two / one:.2f})")
    print(f"two users, one server: bob's one-sample run done in {alone:.2f} s alone, {shared:.2f} s while "
          f"alice's {rows:,}-sample run (code + 2 presets) goes on (median of {rounds})")
    return figures


if __name__ == "__main__":
    main(sys.argv[1:])
