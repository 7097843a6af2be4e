"""A service run over a large dataset: the server's RSS while it grades, pages and exports a
run of 100,000 and of 1,000,000 rows, and how long each part takes.

Starts ``assay serve`` on a free 127.0.0.1 port (SQLite in a temporary folder, and PostgreSQL
when its binaries are installed: ``tests/service/pg_server.py``), uploads generated JSONL rows
(``bench/upload.py``'s, ~60 bytes each) into a dataset, and makes a task grading it with the
``exact_match`` preset. After a warm-up run of 2,000 rows (imports, pools, the grader) the
server's RSS is the baseline; then, per size, a run is started and, until it completes, its
progress is read every 0.5 s (its latency says what any request costs meanwhile) and the run
page's live view (``/pages/api/runs/{id}/live``) every 2 s, while a thread samples the server's
RSS every 50 ms. Then the run's results are exported
as JSONL and as CSV (streamed, each line counted), its first and a deep results page are read
(by offset, then the page after the deep one by its cursor), and the task's runs are listed.
Printed per size: upload rows/s, run results/s (start to
``completed``), the live view's median latency, the export's lines/s, and the RSS peak over the
baseline (the issue: bounded, the same at 1M as at 100k). Medians of ``--runs`` runs per size.
Every process it starts is stopped by its pid; the whole bench is bounded by ``--limit-s``.
Run: ``.venv/bin/python bench/service_run.py [--quick] [--sizes 100000,1000000] [--runs 3]``.
"""

from __future__ import annotations

import argparse
import http.client
import os
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests" / "service"))

import service  # noqa: E402  (free_port, start, wait_healthy, stop, cli, request)
import upload  # noqa: E402  (upload, rss_mb)


class Peak:
    """The largest RSS of a process, sampled every 50 ms while it is armed."""

    def __init__(self, pid: int) -> None:
        self.pid, self.peak, self._done = pid, 0.0, threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def __enter__(self) -> Peak:
        self.peak = upload.rss_mb(self.pid)
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._done.set()
        self._thread.join()

    def _sample(self) -> None:
        while not self._done.wait(0.05):
            self.peak = max(self.peak, upload.rss_mb(self.pid))


class Server:
    """One ``assay serve`` and a bench user's token."""

    def __init__(self, database_url: str, folder: Path, max_rows: int) -> None:
        env = dict(os.environ, ASSAY_DATABASE_URL=database_url, ASSAY_JUDGE_CACHE="off",
                   ASSAY_API_MAX_UPLOAD_BYTES=str(4 << 30), ASSAY_DATASET_MAX_ROWS=str(max_rows),
                   ASSAY_QUEUE_POLL_MS="100")
        env.pop("ASSAY_DEBUG", None)
        service.cli("users", "create", "bench", env=env)
        self.token = service.cli("tokens", "create", "bench", env=env).strip().splitlines()[-1]
        self.port = service.free_port()
        self.base = f"http://127.0.0.1:{self.port}"
        assay = Path(sys.executable).with_name("assay")
        self.process = service.start([str(assay), "serve", "--host", "127.0.0.1", "--port", str(self.port),
                                      "--log-level", "warning"], env, folder / "serve.log", self.port)
        service.wait_healthy(self.base, self.process, folder / "serve.log")

    def api(self, path: str, body: Any = None) -> Any:
        return service.request(f"{self.base}/api/v1{path}", self.token, body)["data"]

    def live(self, run_id: str) -> float:
        """Seconds the run page's live view took."""
        started = time.perf_counter()
        service.request(f"{self.base}/pages/api/runs/{run_id}/live", self.token)
        return time.perf_counter() - started

    def stream_lines(self, path: str) -> int:
        """Lines of a streamed answer, counted as they come (never held)."""
        connection = http.client.HTTPConnection("127.0.0.1", self.port, timeout=3600)
        connection.request("GET", f"/api/v1{path}", headers={"Authorization": f"Bearer {self.token}"})
        response = connection.getresponse()
        assert response.status == 200, response.read()[:500]
        lines = 0
        while chunk := response.read(1 << 20):
            lines += chunk.count(b"\n")
        connection.close()
        return lines

    def task(self, rows: int, evaluator_id: str) -> str:
        dataset = self.api("/datasets", {"name": f"bench-{rows}"})
        upload.upload(self.port, self.token, dataset["id"], rows)
        return self.api("/tasks", {"name": f"bench-{rows}", "datasetId": dataset["id"],
                                   "evaluators": [{"evaluatorId": evaluator_id}]})["id"]

    def run(self, task_id: str, deadline: float) -> tuple[str, float, list[float], list[float]]:
        """Start a run and wait for ``completed``: its id, seconds, and the latencies of the live
        view and of the progress reads (the latter: what any request costs while the run goes)."""
        started = time.perf_counter()
        run = self.api(f"/tasks/{task_id}/runs", {})
        lives, reads, next_live = [], [], started
        while run["status"] in ("queued", "running"):
            if time.perf_counter() > deadline:
                raise TimeoutError(f"run {run['id']} not done within the bench's limit ({run['done']:,} results)")
            if time.perf_counter() >= next_live:
                lives.append(self.live(run["id"]))
                next_live = time.perf_counter() + 2
            time.sleep(0.5)
            asked = time.perf_counter()
            run = self.api(f"/runs/{run['id']}")
            reads.append(time.perf_counter() - asked)
        assert run["status"] == "completed", run
        return run["id"], time.perf_counter() - started, lives, reads


def measure(server: Server, task_id: str, rows: int, deadline: float) -> dict[str, float]:
    """One run of the task over ``rows`` rows, then its pages and exports, under one RSS peak."""
    before = upload.rss_mb(server.process.pid)
    with Peak(server.process.pid) as peak:
        run_id, run_s, lives, reads = server.run(task_id, deadline)
        started = time.perf_counter()
        exported = server.stream_lines(f"/runs/{run_id}/export?format=jsonl")
        export_s = time.perf_counter() - started
        assert exported == rows, (exported, rows)
        assert server.stream_lines(f"/runs/{run_id}/export?format=csv") == rows + 1  # its header
        started = time.perf_counter()
        server.api(f"/runs/{run_id}/results?limit=100")
        deep = server.api(f"/runs/{run_id}/results?limit=100&offset={rows - 200}")
        offset_s = time.perf_counter() - started
        server.api(f"/tasks/{task_id}/runs")
        pages_s = time.perf_counter() - started
        started = time.perf_counter()  # the same depth by the cursor the deep page gave
        last = server.api(f"/runs/{run_id}/results?limit=100&cursor={deep['nextCursor']}")
        cursor_s = time.perf_counter() - started
        assert len(last["items"]) == 100 and last["nextCursor"] is not None, last["nextCursor"]
    return {"run": rows / run_s, "live": statistics.median(lives) if lives else 0.0,
            "read": statistics.median(reads) if reads else 0.0, "export": rows / export_s,
            "pages": pages_s, "offset": offset_s, "cursor": cursor_s, "rss": peak.peak - before}


def run_engine(label: str, database_url: str, sizes: list[int], runs: int, deadline: float) -> None:
    with tempfile.TemporaryDirectory(prefix="assay-bench-run-") as tmp:
        server = Server(database_url, Path(tmp), max(sizes))
        try:
            presets = {p["config"]["presetType"]: p["id"] for p in server.api("/evaluators/presets")}
            warm = server.task(2_000, presets["exact_match"])
            measure(server, warm, 2_000, deadline)
            baseline = upload.rss_mb(server.process.pid)
            for rows in sizes:
                started = time.perf_counter()
                task_id = server.task(rows, presets["exact_match"])
                upload_rate = rows / (time.perf_counter() - started)
                figures = [measure(server, task_id, rows, deadline) for _ in range(runs)]
                med = {key: statistics.median(f[key] for f in figures) for key in figures[0]}
                print(f"  {label:10} {rows:>9,} rows  upload {upload_rate:>7,.0f} rows/s  run {med['run']:>6,.0f} "
                      f"results/s  live view {med['live'] * 1000:>6,.0f} ms (progress {med['read'] * 1000:,.0f} ms)  "
                      f"export {med['export']:>7,.0f} lines/s  "
                      f"pages {med['pages'] * 1000:>5,.0f} ms (first and deep page by offset "
                      f"{med['offset'] * 1000:,.0f} ms, a deep page by cursor {med['cursor'] * 1000:,.0f} ms)  "
                      f"RSS peak +{med['rss']:5.1f} MB over the run's start "
                      f"(server {upload.rss_mb(server.process.pid) - baseline:+.1f} MB since the warm-up)",
                      flush=True)
        finally:
            service.stop(server.process)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100,000 rows only, one run per database")
    parser.add_argument("--sizes", default="100000,1000000")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--engines", default="sqlite,postgres")
    parser.add_argument("--limit-s", type=float, default=3600, help="the whole bench stops after this long")
    opts = parser.parse_args(argv)
    sizes = [100_000] if opts.quick else [int(s) for s in opts.sizes.split(",")]
    runs = 1 if opts.quick else opts.runs
    deadline = time.perf_counter() + opts.limit_s
    print(f"service run over a dataset, exact_match, median of {runs} run(s) per size (load average "
          f"{os.getloadavg()[0]:.1f} at the start)")
    with tempfile.TemporaryDirectory(prefix="assay-bench-run-db-") as tmp:
        if "sqlite" in opts.engines:
            run_engine("SQLite", f"sqlite:///{tmp}/assay.db", sizes, runs, deadline)
        if "postgres" in opts.engines:
            from pg_server import PostgresServer, missing

            problem = missing()
            if problem:
                print(f"  PostgreSQL: not measured ({problem})")
                return
            server = PostgresServer().start()
            try:
                run_engine("PostgreSQL", server.new_database(), sizes, runs, deadline)
            finally:
                server.stop()


if __name__ == "__main__":
    main(sys.argv[1:])
