"""Online evaluation's intake: spans/s into ``POST /v1/traces``, the p50/p99 latency of an
export request, the grading lag after the load, and the server's RSS, with a preset rule
grading 10% of the traces (a regex over the answer, span scope).

Starts ``assay serve`` on a free 127.0.0.1 port on SQLite (a temporary folder) and on
PostgreSQL when its binaries are installed (``tests/service/pg_server.py`` starts one). Batches
of ``--batch`` GenAI chat spans (current conventions, content captured, ~600 bytes of
attributes each; every span new) are built and serialised before the clock starts, then
``--clients`` threads post them over kept-alive connections for ``--duration`` seconds.
Latency is each request's wall time; the lag is the time from the last answer until no job
waits. Every process it starts is stopped by its pid. Run:
``.venv/bin/python bench/online_intake.py [--quick] [--rounds N] [--duration S] [--clients N]``.
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
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests" / "service"))
sys.path.insert(0, str(HERE.parent / "tests" / "online"))

import service  # noqa: E402  (free_port, start, stop, cli, request)
from otlp_build import NOW_NS, chat_attributes, request, span  # noqa: E402
from pg_server import PostgresServer, missing  # noqa: E402
from upload import rss_mb  # noqa: E402

SPANS_TARGET = 5_000
P99_TARGET_MS = 50.0


def batches(count: int, size: int) -> list[bytes]:
    out = []
    for b in range(count):
        spans = []
        for i in range(size):
            trace = os.urandom(16)
            model = "gpt-4o" if i % 2 else "gpt-4o-mini"
            spans.append(span(trace, os.urandom(8), "chat " + model,
                              chat_attributes(f"question {b}-{i}: what is the capital of France?",
                                              "Paris." if i % 3 else "Lyon.", model=model),
                              start_ns=NOW_NS + (b * size + i) * 1000))
        out.append(request(*spans).SerializeToString())
    return out


def post_all(port: int, token: str, bodies: Iterable[bytes], deadline: float, latencies: list[float],
             sent: list[int], errors: list[str]) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/x-protobuf"}
    for body in bodies:
        if time.monotonic() > deadline:
            break
        start = time.perf_counter()
        connection.request("POST", "/v1/traces", body=body, headers=headers)
        response = connection.getresponse()
        response.read()
        latencies.append((time.perf_counter() - start) * 1000)
        if response.status == 200:
            sent.append(1)
        elif len(errors) < 5:
            errors.append(str(response.status))
    connection.close()


def served(database_url: str, folder: Path) -> tuple[Any, int, str]:
    """``assay serve`` on ``database_url`` with a user's token and a preset rule grading 10% of the
    chat spans: (its process, its port, the token)."""
    env = {**os.environ, "ASSAY_DATABASE_URL": database_url, "ASSAY_JUDGE_CACHE": "off",
           "ASSAY_ONLINE_MAX_BACKLOG": "10000000"}
    service.cli("users", "create", "bench", env=env)
    token = service.cli("tokens", "create", "bench", env=env).strip().splitlines()[-1]
    port = service.free_port()
    process = service.start([sys.executable, "-m", "assay.cli.main", "serve", "--host", "127.0.0.1", "--port",
                             str(port), "--log-level", "warning"], env, folder / "server.log", port)
    try:
        base = f"http://127.0.0.1:{port}/api/v1"
        evaluator = service.request(base + "/evaluators", token, {"name": "says Paris", "type": "preset", "config": {
            "presetType": "regex", "params": {"pattern": "Paris"}}})["data"]["id"]
        service.request(base + "/online-rules", token, {"name": "10% of answers", "sampleRate": 0.1,
                                                        "filter": 'gen_ai.operation.name == "chat"',
                                                        "evaluators": [{"evaluatorId": evaluator}]})
    except BaseException:
        service.stop(process)
        raise
    return process, port, token


def lazy_batches(count: int, size: int) -> Iterator[bytes]:
    """``count`` batches made as they are sent (the client's memory stays flat too)."""
    for _ in range(count):
        yield batches(1, size)[0]


def memory_round(database_url: str, folder: Path, total: int, opts: argparse.Namespace) -> list[tuple[int, float]]:
    """(spans stored so far, the server's RSS in MiB) at each tenth of ``total`` spans."""
    process, port, token = served(database_url, folder)
    try:
        points = [(0, rss_mb(process.pid))]
        step = total // 10
        for _ in range(10):
            per_client = step // opts.batch // opts.clients
            threads = [threading.Thread(target=post_all, args=(port, token, lazy_batches(per_client, opts.batch),
                                                               time.monotonic() + 3600, [], [], []))
                       for _ in range(opts.clients)]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()
            points.append((points[-1][0] + per_client * opts.batch * opts.clients, rss_mb(process.pid)))
        return points
    finally:
        service.stop(process)


def backlog(database_url: str) -> int:
    from assay.store import Database
    from assay.store import online as rows

    database = Database(database_url)
    try:
        with database.session() as session:
            return rows.backlog(session)
    finally:
        database.dispose()


def one_round(database_url: str, folder: Path, opts: argparse.Namespace) -> dict[str, Any]:
    process, port, token = served(database_url, folder)
    try:
        per_client = int(opts.duration * SPANS_TARGET * 1.5 / opts.batch / opts.clients) + 1
        work = [batches(per_client, opts.batch) for _ in range(opts.clients)]
        warm: list[float] = []
        post_all(port, token, batches(5, opts.batch), time.monotonic() + 30, warm, [], [])
        rss_before = rss_mb(process.pid)
        latencies: list[float] = []
        sent: list[int] = []
        errors: list[str] = []
        deadline = time.monotonic() + opts.duration
        started = time.perf_counter()
        threads = [threading.Thread(target=post_all, args=(port, token, work[c], deadline, latencies, sent, errors))
                   for c in range(opts.clients)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        elapsed = time.perf_counter() - started
        rss_after = rss_mb(process.pid)
        finished = time.perf_counter()
        while backlog(database_url) and time.perf_counter() - finished < 120:
            time.sleep(0.1)
        lag = time.perf_counter() - finished
        ordered = sorted(latencies)
        return {"spans_per_s": len(sent) * opts.batch / elapsed, "p50_ms": statistics.median(ordered),
                "p99_ms": ordered[int(len(ordered) * 0.99) - 1] if ordered else float("nan"),
                "lag_s": lag, "rss_growth_mb": rss_after - rss_before, "errors": errors,
                "spans": len(sent) * opts.batch}
    finally:
        service.stop(process)


def main(argv: list[str] | None = None) -> dict[str, list[dict[str, Any]]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="5 s, one round")
    parser.add_argument("--duration", type=float, default=15.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--batch", type=int, default=100, help="spans per export request")
    parser.add_argument("--memory-spans", type=int, default=0,
                        help="instead: send this many spans to a SQLite server and print its RSS at each tenth")
    opts = parser.parse_args(argv)
    if opts.memory_spans:
        with tempfile.TemporaryDirectory(prefix="assay-online-") as folder:
            points = memory_round(f"sqlite:///{folder}/assay.db", Path(folder), opts.memory_spans, opts)
        print(f"online intake, server RSS (MiB) as {opts.memory_spans:,} spans arrive (SQLite; load "
              f"{os.getloadavg()[0]:.2f}): " + ", ".join(f"{n:,}: {mb:.0f}" for n, mb in points))
        return {}
    if opts.quick:
        opts.duration, opts.rounds = 5.0, 1
    figures: dict[str, list[dict[str, Any]]] = {}
    pg = None if missing() else PostgresServer().start()
    try:
        for name in ("sqlite", "postgresql") if pg else ("sqlite",):
            figures[name] = []
            for _ in range(opts.rounds):
                with tempfile.TemporaryDirectory(prefix="assay-online-") as folder:
                    url = f"sqlite:///{folder}/assay.db" if name == "sqlite" else pg.new_database()  # type: ignore[union-attr]
                    figures[name].append(one_round(url, Path(folder), opts))
    finally:
        if pg is not None:
            pg.stop()
    report(figures, opts)
    return figures


def report(figures: dict[str, list[dict[str, Any]]], opts: argparse.Namespace) -> None:
    print(f"online intake: {opts.clients} clients posting {opts.batch}-span protobuf batches for {opts.duration:g} s, "
          f"a rule at 10% sampling (median of {opts.rounds} rounds; load {os.getloadavg()[0]:.2f})")
    print(f"{'database':12} {'spans/s':>9} {'target':>7} {'p50 ms':>7} {'p99 ms':>7} {'target':>7} {'lag s':>6} "
          f"{'RSS +MB':>8}")
    for name, rounds in figures.items():
        def med(key: str, rounds: list[dict[str, Any]] = rounds) -> float:
            return statistics.median(r[key] for r in rounds)
        print(f"{name:12} {med('spans_per_s'):>9,.0f} {SPANS_TARGET:>7,} {med('p50_ms'):>7.1f} {med('p99_ms'):>7.1f} "
              f"{P99_TARGET_MS:>7.0f} {med('lag_s'):>6.1f} {med('rss_growth_mb'):>8.1f}")
        failed = [e for r in rounds for e in r["errors"]]
        if failed:
            print(f"  answers other than 200: {json.dumps(failed[:5])}")


if __name__ == "__main__":
    main(sys.argv[1:])
