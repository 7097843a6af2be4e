"""Dataset uploads into ``assay serve``: rows/s and the server's RSS growth for 1M and 10M rows.

Starts ``assay serve`` on a free 127.0.0.1 port (SQLite in a temporary folder, and PostgreSQL
when its server binaries are installed: the tests' ``pg_server`` starts one), creates a
dataset over the API, and uploads generated JSONL rows (``{"id": "r1", "input": "q1",
"output": "a", "expected": "a"}``, ~60 bytes each) as one streamed request body without a
length. Rows/s is rows over the request's wall time; RSS growth is the server's largest RSS,
sampled every 50 ms during the upload, minus its RSS just before (after a small warm-up
upload). Prints the median of ``--runs`` uploads per size. Every process it starts is stopped
by its pid. Run: ``.venv/bin/python bench/upload.py [--quick] [--runs N] [--sizes 1000000,...]``.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests" / "service"))

import service  # noqa: E402  (free_port, start, wait_healthy, stop, cli, request)

RATE_TARGET = 100_000
RSS_TARGET_MB = 256
CHUNK_ROWS = 20_000


def rows_body(n: int) -> Iterator[bytes]:
    for start in range(0, n, CHUNK_ROWS):
        yield "".join(f'{{"id":"r{i}","input":"q{i}","output":"a","expected":"a"}}\n'
                      for i in range(start, min(start + CHUNK_ROWS, n))).encode()


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def upload(port: int, token: str, dataset_id: str, n: int) -> dict:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=3600)
    connection.request("POST", f"/api/v1/datasets/{dataset_id}/versions?filename=bench.jsonl", body=rows_body(n),
                       headers={"Authorization": f"Bearer {token}", "Content-Type": "application/x-ndjson"},
                       encode_chunked=True)
    response = connection.getresponse()
    body = json.loads(response.read())
    connection.close()
    if response.status != 200:
        raise RuntimeError(f"upload failed: {response.status} {body}")
    return body["data"]


def cpu_s(pid: int) -> float:
    """The process's user and system CPU time so far (its threads included)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def tree_cpu_s(pid: int) -> float:
    """The CPU time of a process and of its children (a PostgreSQL server's backends)."""
    total = cpu_s(pid)
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(stat[1]) == pid:
                total += (int(stat[11]) + int(stat[12])) / os.sysconf("SC_CLK_TCK")
    return total


def measure(port: int, pid: int, token: str, dataset_id: str, n: int,
            db_pid: int | None = None) -> tuple[float, float, float, float]:
    """One upload of ``n`` rows: (rows/s, rows per CPU-second of the server, RSS growth in MB,
    rows per CPU-second of the server and the database server together, 0 without ``db_pid``).
    On a loaded machine the wall-clock rate says more about the load than about assay; the
    CPU time says what the upload cost."""
    before = rss_mb(pid)
    cpu_before = cpu_s(pid)
    db_before = tree_cpu_s(db_pid) if db_pid else 0.0
    peak = [before]
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.05):
            peak[0] = max(peak[0], rss_mb(pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    started = time.perf_counter()
    version = upload(port, token, dataset_id, n)
    elapsed = time.perf_counter() - started
    done.set()
    sampler.join()
    assert version["rowCount"] == n, version
    server_cpu = cpu_s(pid) - cpu_before
    both = n / max(server_cpu + tree_cpu_s(db_pid) - db_before, 1e-9) if db_pid else 0.0
    return n / elapsed, n / max(server_cpu, 1e-9), max(peak[0], rss_mb(pid)) - before, both


def run_engine(label: str, database_url: str, sizes: list[int], runs: int,
               db_pid: int | None = None) -> list[tuple[str, int, float, float, float]]:
    figures = []
    with tempfile.TemporaryDirectory(prefix="assay-bench-upload-") as tmp:
        env = dict(os.environ, ASSAY_DATABASE_URL=database_url, ASSAY_JUDGE_CACHE="off",
                   ASSAY_API_MAX_UPLOAD_BYTES=str(4 << 30), ASSAY_DATASET_MAX_ROWS=str(max(sizes)))
        env.pop("ASSAY_DEBUG", None)
        service.cli("users", "create", "bench", env=env)
        token = service.cli("tokens", "create", "bench", env=env).strip().splitlines()[-1]
        port = service.free_port()
        assay = Path(sys.executable).with_name("assay")
        process = service.start([str(assay), "serve", "--host", "127.0.0.1", "--port", str(port)], env,
                                Path(tmp) / "serve.log", port)
        try:
            service.wait_healthy(f"http://127.0.0.1:{port}", process, Path(tmp) / "serve.log")
            dataset = service.request(f"http://127.0.0.1:{port}/api/v1/datasets", token, {"name": "bench"})["data"]
            upload(port, token, dataset["id"], 20_000)  # warm-up: imports, pools, first pages of the tables
            for n in sizes:
                results = [measure(port, process.pid, token, dataset["id"], n, db_pid) for _ in range(runs)]
                rate = statistics.median(r for r, _, _, _ in results)
                per_cpu = statistics.median(c for _, c, _, _ in results)
                growth = statistics.median(g for _, _, g, _ in results)
                both = f"  {statistics.median(b for *_, b in results):>9,.0f} rows/(server+database)-CPU-s" \
                    if db_pid else ""
                figures.append((label, n, rate, per_cpu, growth))
                print(f"  {label:10} {n:>11,} rows  {rate:>9,.0f} rows/s  {per_cpu:>9,.0f} rows/server-CPU-s{both}  "
                      f"RSS +{growth:6.1f} MB  (runs: {', '.join(f'{r:,.0f}/s +{g:.0f} MB' for r, _, g, _ in results)}"
                      ")", flush=True)
        finally:
            service.stop(process)
    return figures


def main(argv: list[str] | None = None) -> list[tuple[str, int, float, float, float]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sizes", default="1000000,10000000")
    parser.add_argument("--quick", action="store_true", help="1M rows, one run per database")
    parser.add_argument("--engines", default="sqlite,postgres")
    opts = parser.parse_args(argv)
    sizes = [1_000_000] if opts.quick else [int(s) for s in opts.sizes.split(",")]
    runs = 1 if opts.quick else opts.runs
    print(f"dataset upload, JSONL streamed without a length, median of {runs} run(s) "
          f"(targets: >= {RATE_TARGET:,} rows/s, RSS growth <= {RSS_TARGET_MB} MB; load average "
          f"{os.getloadavg()[0]:.1f} at the start)")
    figures: list[tuple[str, int, float, float, float]] = []
    with tempfile.TemporaryDirectory(prefix="assay-bench-upload-db-") as tmp:
        if "sqlite" in opts.engines:
            figures += run_engine("SQLite", f"sqlite:///{tmp}/assay.db", sizes, runs)
        if "postgres" in opts.engines:
            from pg_server import PostgresServer, missing

            problem = missing()
            if problem:
                print(f"  PostgreSQL: not measured ({problem})")
            else:
                server = PostgresServer().start()
                try:
                    assert server.process is not None
                    figures += run_engine("PostgreSQL", server.new_database(), sizes, runs, server.process.pid)
                finally:
                    server.stop()
    return figures


if __name__ == "__main__":
    main()
