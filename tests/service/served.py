"""``assay serve`` as an operator runs it: a real process on 127.0.0.1, in its own working
directory, configured by environment variables; and the ``assay`` command line beside it.
Importable by name (``served``) from the service tests that need real server processes."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx2 as httpx
from pg_server import free_port


def assay(*args: str, env: dict[str, str], cwd: Path) -> str:
    """Run ``assay ARGS`` and return its output (it must succeed)."""
    done = subprocess.run([sys.executable, "-m", "assay.cli.main", *args], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def new_token(env: dict[str, str], cwd: Path, user: str = "alice") -> str:
    """Create ``user`` and a token of theirs through the command line; returns the token."""
    assay("users", "create", user, env=env, cwd=cwd)
    return assay("tokens", "create", user, env=env, cwd=cwd).strip().splitlines()[-1]


class Server:
    """One ``assay serve`` process on a free port; its output goes to ``server.log`` in ``root``."""

    def __init__(self, root: Path, env: dict[str, str], log_level: str = "warning") -> None:
        self.cwd = root
        self.port = free_port()
        self.log = root / "server.log"
        with open(self.log, "ab") as out:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "assay.cli.main", "serve", "--port", str(self.port), "--log-level", log_level],
                env=env, cwd=root, stdout=out, stderr=subprocess.STDOUT)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def client(self, token: str) -> httpx.Client:
        return httpx.Client(base_url=f"{self.base}/api/v1", timeout=30,
                            headers={"Authorization": f"Bearer {token}"})

    def wait_ready(self, token: str) -> None:
        deadline = time.monotonic() + 90
        with self.client(token) as client:
            while True:
                assert self.process.poll() is None, self.log.read_text()[-3000:]
                assert time.monotonic() < deadline, self.log.read_text()[-3000:]
                try:
                    if client.get("/evaluators").status_code == 200:
                        return
                except httpx.TransportError:
                    pass
                time.sleep(0.1)

    def stop(self) -> None:
        """SIGTERM (a clean stop), then SIGKILL after 30 s; by this process's pid only."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


SLOW_CODE = ("import time\n\ndef evaluate(input, output, expected, metadata):\n"
             "    time.sleep({seconds})\n    return {{'passed': output == expected}}\n")


def start_run(client: httpx.Client, rows: int, *, sleep_s: float = 0.01, name: str = "run") -> str:
    """A task of ``rows`` samples graded by a Python evaluator that sleeps ``sleep_s`` per sample
    and by ``exact_match`` (every fourth sample fails both), and a run of it; returns the run's id."""
    code = client.post("/evaluators", json={"name": f"{name}-slow", "type": "code", "config": {
        "language": "python", "code": SLOW_CODE.format(seconds=sleep_s)}}).json()["data"]
    preset = next(p for p in client.get("/evaluators/presets").json()["data"]
                  if p["config"]["presetType"] == "exact_match")
    data = [{"id": f"s{i}", "input": "q", "output": "a", "expected": "a" if i % 4 else "b"} for i in range(rows)]
    task = client.post("/tasks", json={"name": name, "dataset": {"rows": data},
                                       "evaluators": [{"evaluatorId": code["id"]}, {"evaluatorId": preset["id"]}]})
    assert task.status_code == 200, task.text
    started = client.post(f"/tasks/{task.json()['data']['id']}/runs")
    assert started.status_code == 200, started.text
    return started.json()["data"]["id"]


def wait_for_run(client: httpx.Client, run_id: str, seconds: float) -> dict:
    """The run once it is finished (completed, failed or cancelled); fails after ``seconds``."""
    deadline = time.monotonic() + seconds
    while (run := client.get(f"/runs/{run_id}").json()["data"])["status"] not in ("completed", "failed", "cancelled"):
        assert time.monotonic() < deadline, run
        time.sleep(0.1)
    return run


def check_results(client: httpx.Client, run: dict, rows: int) -> None:
    """The run completed with exactly one result per (sample, evaluator) and the right verdicts."""
    assert run["status"] == "completed" and run["done"] == run["total"] == 2 * rows, run
    items = [item for offset in range(0, 2 * rows, 1000) for item in client.get(
        f"/runs/{run['id']}/results", params={"limit": 1000, "offset": offset}).json()["data"]["items"]]
    pairs = [(r["sampleId"], r["evaluatorId"]) for r in items]
    assert len(pairs) == len(set(pairs)) == 2 * rows
    assert run["summary"]["samples"] == rows and run["summary"]["samplesFailed"] == rows // 4
