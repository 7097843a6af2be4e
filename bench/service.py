"""`assay serve` under load: ``POST /evaluators/{id}/test`` driven by wrk, beside a bare FastAPI app.

Starts ``assay serve`` on a free 127.0.0.1 port with a temporary SQLite database (the user and
token made by the real CLI), creates a Python code evaluator over the API, and starts a bare
FastAPI app (one POST route with the same body model, nothing else) under the same uvicorn
settings. Then, for each of ``--rounds`` rounds, wrk runs ``--connections`` connections for
``--duration`` seconds against the bare app, the exact_match preset and the Python evaluator,
in that order, so each ratio compares figures of the same round. Prints the medians of the
rounds: requests/s, p50, p99, errors, and the ratio to the bare app.

Needs ``wrk`` (``apt-get install -y wrk``; ``make bench`` installs it when it can); without
it, says so and prints the last recorded figures. Every process it starts is stopped by its
pid. Run: ``.venv/bin/python bench/service.py [--quick]``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
LUA = HERE / "service.lua"
BODY = {"input": "What is the capital of France?", "output": "Paris", "expected": "Paris",
        "metadata": {"topic": "geography"}}
PYTHON_EVALUATOR = {
    "name": "bench-python", "type": "code",
    "config": {"language": "python", "timeout": 2000,
               "code": "def evaluate(input, output, expected, metadata):\n"
                       "    ok = output.strip() == (expected or '').strip()\n"
                       "    return {'passed': ok, 'score': 1.0 if ok else 0.0,\n"
                       "            'reason': 'same' if ok else 'differs'}\n"},
}
TARGETS = {"preset": 3000, "python": 300}
P99_TARGET_MS = 50
RATIO_TARGET = 0.45
LAST_RECORDED = ("2 workers, 50 connections, 20 s, median of 3 (load average ~1 before the run): preset "
                 "exact_match 5,658/s, p50 8.5 ms, p99 17.5 ms (133% of the bare app's 4,655/s); Python "
                 "evaluator 570/s, p50 84 ms, p99 265 ms; 0 errors")
"""What docs/performance.md quotes, printed when wrk is missing."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def request(url: str, token: str | None = None, body: Any = None) -> Any:
    headers = {"Content-Type": "application/json"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    data = None if body is None else json.dumps(body).encode()
    with urllib.request.urlopen(urllib.request.Request(url, data=data, headers=headers), timeout=30) as reply:
        return json.loads(reply.read())


def wait_healthy(base: str, process: subprocess.Popen, log: Path, limit_s: float = 60) -> None:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited ({process.returncode}):\n{log.read_text()[-2000:]}")
        try:
            request(f"{base}/health")
            return
        except (OSError, urllib.error.URLError):
            time.sleep(0.1)
    raise RuntimeError(f"the server did not answer /health within {limit_s:.0f} s:\n{log.read_text()[-2000:]}")


def stop(process: subprocess.Popen) -> None:
    """Stop a process this script started, by its pid: SIGTERM, then SIGKILL after 15 s."""
    if process.poll() is not None:
        return
    os.kill(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=5)


def cli(*args: str, env: dict[str, str]) -> str:
    assay = Path(sys.executable).with_name("assay")
    out = subprocess.run([str(assay), *args], env=env, capture_output=True, text=True, timeout=60, check=True)
    return out.stdout


def wrk(url: str, token: str, seconds: float, connections: int, threads: int) -> dict[str, Any]:
    env = dict(os.environ, ASSAY_BENCH_BODY=json.dumps(BODY), ASSAY_BENCH_TOKEN=token)
    command = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "--timeout", "5s", "-s", str(LUA), url]
    out = subprocess.run(command, env=env, capture_output=True, text=True, timeout=seconds + 60, check=True)
    line = next(ln for ln in out.stdout.splitlines() if ln.startswith("ASSAY_BENCH "))
    r = json.loads(line.removeprefix("ASSAY_BENCH "))
    r["rps"] = r["requests"] / (r["duration_us"] / 1e6)
    r["errors"] = r["connect"] + r["read"] + r["write"] + r["status"] + r["timeout"]
    return r


def start(command: list[str], env: dict[str, str], log: Path, port: int) -> subprocess.Popen:
    with log.open("ab") as out:
        process = subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
    wait_healthy(f"http://127.0.0.1:{port}", process, log)
    return process


def uvicorn_options(workers: int) -> list[str]:
    """The settings both servers share (loop and http parser: uvicorn's ``auto``, as ``assay serve``)."""
    return ["--log-level", "warning", *(["--workers", str(workers)] if workers != 1 else [])]


def main(argv: list[str] | None = None) -> dict[str, Any] | None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="3 s per run, one round")
    parser.add_argument("--duration", type=float, default=20.0, help="seconds per wrk run")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--connections", type=int, default=50)
    parser.add_argument("--threads", type=int, default=2, help="wrk threads")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1,
                        help="uvicorn worker processes of both servers (default: one per core)")
    opts = parser.parse_args(argv)
    if opts.quick:
        opts.duration, opts.rounds = 3.0, 1
    if shutil.which("wrk") is None:
        print("service load: wrk is not installed (apt-get install -y wrk); last recorded figures:")
        print(f"  {LAST_RECORDED}")
        return None
    seconds = max(1, round(opts.duration))
    processes: list[subprocess.Popen] = []
    with tempfile.TemporaryDirectory(prefix="assay-bench-service-") as tmp:
        env = dict(os.environ, ASSAY_DATABASE_URL=f"sqlite:///{tmp}/assay.db", ASSAY_JUDGE_CACHE="off")
        env.pop("ASSAY_DEBUG", None)
        try:
            cli("users", "create", "bench", env=env)
            token = cli("tokens", "create", "bench", env=env).strip().splitlines()[-1]
            port, bare_port = free_port(), free_port()
            assay = Path(sys.executable).with_name("assay")
            processes.append(start([str(assay), "serve", "--host", "127.0.0.1", "--port", str(port),
                                    *uvicorn_options(opts.workers)],
                                   env, Path(tmp) / "serve.log", port))
            processes.append(start([sys.executable, "-m", "uvicorn", "_bare_app:app",
                                    "--app-dir", str(HERE), "--host", "127.0.0.1", "--port", str(bare_port),
                                    *uvicorn_options(opts.workers)], env, Path(tmp) / "bare.log", bare_port))
            api = f"http://127.0.0.1:{port}/api/v1"
            presets = request(f"{api}/evaluators/presets", token)["data"]
            preset_id = next(p["id"] for p in presets if p["config"]["presetType"] == "exact_match")
            python_id = request(f"{api}/evaluators", token, PYTHON_EVALUATOR)["data"]["id"]
            urls = {"bare": f"http://127.0.0.1:{bare_port}/api/v1/evaluators/x/test",
                    "preset": f"{api}/evaluators/{preset_id}/test", "python": f"{api}/evaluators/{python_id}/test"}
            for name in ("preset", "python"):
                answer = request(urls[name], token, BODY)["data"]
                assert answer["passed"] and answer["error"] is None, (name, answer)
            for url in urls.values():  # warm-up: caches filled, sandbox zygotes forked
                wrk(url, token, 2, opts.connections, opts.threads)
            rounds = [{name: wrk(url, token, seconds, opts.connections, opts.threads) for name, url in urls.items()}
                      for _ in range(opts.rounds)]
        finally:
            for process in reversed(processes):
                stop(process)
    return report(rounds, opts)


def report(rounds: list[dict[str, dict[str, Any]]], opts: argparse.Namespace) -> dict[str, Any]:
    def med(name: str, key: str) -> float:
        return statistics.median(r[name][key] for r in rounds)

    ratios = [r["preset"]["rps"] / r["bare"]["rps"] for r in rounds]
    ratio = statistics.median(ratios)
    print(f"assay serve, POST /evaluators/{{id}}/test: wrk, {opts.connections} connections, {opts.threads} threads, "
          f"{round(opts.duration)} s per run, median of {len(rounds)} round(s); {opts.workers} uvicorn worker(s), "
          f"SQLite; client and servers share the machine")
    print(f"{'server':28} {'requests/s':>11} {'p50 ms':>8} {'p99 ms':>8} {'errors':>7} {'target':>24}")
    labels = {"bare": "bare FastAPI app", "preset": "preset exact_match", "python": "Python code evaluator"}
    for name, label in labels.items():
        target = {"bare": "", "preset": f">= {TARGETS['preset']:,}/s, p99 < {P99_TARGET_MS} ms",
                  "python": f">= {TARGETS['python']}/s"}[name]
        print(f"{label:28} {med(name, 'rps'):>11,.0f} {med(name, 'p50_us') / 1000:>8.1f} "
              f"{med(name, 'p99_us') / 1000:>8.1f} {sum(r[name]['errors'] for r in rounds):>7} {target:>24}")
    print(f"preset / bare app: {ratio:.0%} (target >= {RATIO_TARGET:.0%}; ratios per round: "
          f"{', '.join(f'{x:.0%}' for x in ratios)})")
    return {"rounds": rounds, "ratio": ratio}


if __name__ == "__main__":
    main()
