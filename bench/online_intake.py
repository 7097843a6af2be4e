"""Online evaluation's intake: the p50/p99 latency of ``POST /v1/traces`` at a fixed offered
rate and at saturation, spans/s, the grading lag, and the server's RSS, with a preset rule
grading 10% of the traces (a regex over the answer, span scope).

Starts ``assay serve`` on a free 127.0.0.1 port on SQLite (a temporary folder) and on
PostgreSQL when its binaries are installed (``tests/service/pg_server.py`` starts one). In each
round, ``--clients`` exporters post protobuf batches of ``--batch`` spans (512, as
``BatchSpanProcessor`` sends them; every span new: ``_otlp_load``) over kept-alive connections:
first on a fixed schedule at ``--rate`` spans/s for ``--duration`` seconds (latency counted from
when each request was due), then, once the jobs are graded, back to back for as long
(saturation). The lag is the time from the last answer until no span waits to be planned and
no job to be graded. ``--memory-spans N`` instead streams N spans at saturation into one server
and prints its RSS as they arrive. Every process it starts is stopped by its pid. Run:
``.venv/bin/python bench/online_intake.py [--quick] [--rounds N] [--duration S] [--rate R]
[--clients N] [--memory-spans N --database sqlite|postgresql]``.
"""

from __future__ import annotations

import argparse
import json
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
sys.path.insert(0, str(HERE.parent / "tests" / "online"))

import service  # noqa: E402  (free_port, start, stop, cli, request)
from _otlp_load import export  # noqa: E402
from pg_server import PostgresServer, missing  # noqa: E402
from upload import rss_mb  # noqa: E402

SPANS_TARGET = 5_000
P99_TARGET_MS = 50.0


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


def waiting(database_url: str) -> int:
    """Spans not planned and jobs not graded, on the whole database."""
    from assay.store import Database
    from assay.store import online as rows
    from assay.store import online_intake as arrivals

    database = Database(database_url)
    try:
        with database.session() as session:
            return rows.backlog(session) + arrivals.unplanned(session)
    finally:
        database.dispose()


def drained(database_url: str, limit_s: float = 300) -> float:
    """Seconds until nothing waits (at most ``limit_s``)."""
    started = time.perf_counter()
    while waiting(database_url) and time.perf_counter() - started < limit_s:
        time.sleep(0.1)
    return time.perf_counter() - started


def one_round(database_url: str, folder: Path, opts: argparse.Namespace) -> dict[str, Any]:
    process, port, token = served(database_url, folder)
    try:
        export(port, token, 1, opts.batch, until=time.monotonic() + 60, total=opts.batch * 5)  # warm up
        drained(database_url)
        rss_before = rss_mb(process.pid)
        started = time.perf_counter()
        paced = export(port, token, opts.clients, opts.batch, until=time.monotonic() + opts.duration, rate=opts.rate)
        paced_s = time.perf_counter() - started
        paced_lag = drained(database_url)
        started = time.perf_counter()
        full = export(port, token, opts.clients, opts.batch, until=time.monotonic() + opts.duration)
        full_s = time.perf_counter() - started
        full_lag = drained(database_url)
        return {"paced_spans_per_s": paced.spans / paced_s, "paced_p50_ms": paced.p(0.5), "paced_p99_ms": paced.p(0.99),
                "paced_lag_s": paced_lag, "spans_per_s": full.spans / full_s, "p50_ms": full.p(0.5),
                "p99_ms": full.p(0.99), "lag_s": full_lag, "rss_growth_mb": rss_mb(process.pid) - rss_before,
                "refused": paced.refused + full.refused, "errors": paced.errors + full.errors}
    finally:
        service.stop(process)


Point = tuple[float, int, float]


def memory_round(database_url: str, folder: Path, total: int, opts: argparse.Namespace) -> list[Point]:
    """(seconds, spans accepted so far, the server's RSS in MiB), sampled every ``--every`` seconds
    while ``total`` spans arrive at saturation, and once at the end."""
    process, port, token = served(database_url, folder)
    points: list[Point] = []
    sent = [0]
    done = threading.Event()
    started = time.monotonic()

    def sample() -> None:
        while not done.wait(opts.every):
            points.append((time.monotonic() - started, sent[0], rss_mb(process.pid)))
            print(f"  {points[-1][0]:.0f} s: {points[-1][1]:,} spans, RSS {points[-1][2]:.0f} MiB (load "
                  f"{os.getloadavg()[0]:.1f})", flush=True)  # as it goes: a long run can be read while it runs

    try:
        points.append((0.0, 0, rss_mb(process.pid)))
        sampler = threading.Thread(target=sample, daemon=True)
        sampler.start()
        step = max(opts.batch * opts.clients, total // 100)
        while sent[0] < total:
            tally = export(port, token, opts.clients, opts.batch, until=time.monotonic() + 3600,
                           total=min(step, total - sent[0]))
            if tally.errors or not tally.spans:
                raise SystemExit(f"the server answered {tally.errors}")
            sent[0] += tally.spans
        done.set()
        sampler.join()
        points.append((time.monotonic() - started, sent[0], rss_mb(process.pid)))
        return points
    finally:
        done.set()
        service.stop(process)


def databases(wanted: list[str]) -> tuple[PostgresServer | None, list[str]]:
    if "postgresql" in wanted and missing():
        print(f"PostgreSQL left out: {missing()}")
        wanted = [name for name in wanted if name != "postgresql"]
    return (PostgresServer().start() if "postgresql" in wanted else None), wanted


def url_of(name: str, pg: PostgresServer | None, folder: str) -> str:
    return f"sqlite:///{folder}/assay.db" if name == "sqlite" or pg is None else pg.new_database()


def main(argv: list[str] | None = None) -> dict[str, list[dict[str, Any]]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="5 s, one round")
    parser.add_argument("--duration", type=float, default=10.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--rate", type=float, default=SPANS_TARGET, help="spans/s offered in the paced part")
    parser.add_argument("--clients", type=int, default=4, help="exporters posting at once")
    parser.add_argument("--batch", type=int, default=512, help="spans per export request")
    parser.add_argument("--database", action="append", choices=("sqlite", "postgresql"),
                        help="the databases (default: both)")
    parser.add_argument("--memory-spans", type=int, default=0,
                        help="instead: stream this many spans into one server and print its RSS as they arrive")
    parser.add_argument("--every", type=float, default=10.0, help="seconds between RSS samples (--memory-spans)")
    opts = parser.parse_args(argv)
    if opts.quick:
        opts.duration, opts.rounds = 5.0, 1
    pg, names = databases(opts.database or ["sqlite", "postgresql"])
    figures: dict[str, list[dict[str, Any]]] = {}
    try:
        for name in names:
            if opts.memory_spans:
                with tempfile.TemporaryDirectory(prefix="assay-online-") as folder:
                    points = memory_round(url_of(name, pg, folder), Path(folder), opts.memory_spans, opts)
                print(f"online intake, server RSS as {opts.memory_spans:,} spans arrive ({name}; load "
                      f"{os.getloadavg()[0]:.2f}): " + ", ".join(f"{s:.0f} s {n:,} spans {mb:.0f} MiB"
                                                                for s, n, mb in points))
                continue
            figures[name] = []
            for _ in range(opts.rounds):
                with tempfile.TemporaryDirectory(prefix="assay-online-") as folder:
                    figures[name].append(one_round(url_of(name, pg, folder), Path(folder), opts))
    finally:
        if pg is not None:
            pg.stop()
    if figures:
        report(figures, opts)
    return figures


def report(figures: dict[str, list[dict[str, Any]]], opts: argparse.Namespace) -> None:
    print(f"online intake: {opts.clients} exporters posting {opts.batch}-span protobuf batches, {opts.duration:g} s "
          f"at {opts.rate:,.0f} spans/s then {opts.duration:g} s back to back; a rule at 10% sampling (median of "
          f"{opts.rounds} rounds; load {os.getloadavg()[0]:.2f}; p99 target {P99_TARGET_MS:.0f} ms)")
    print(f"{'database':11} {'paced/s':>8} {'p50 ms':>7} {'p99 ms':>7} {'lag s':>6} | {'max/s':>7} {'p50 ms':>7} "
          f"{'p99 ms':>7} {'lag s':>6} {'RSS +MB':>8}")
    for name, rounds in figures.items():
        def med(key: str, rounds: list[dict[str, Any]] = rounds) -> float:
            return statistics.median(r[key] for r in rounds)
        print(f"{name:11} {med('paced_spans_per_s'):>8,.0f} {med('paced_p50_ms'):>7.1f} {med('paced_p99_ms'):>7.1f} "
              f"{med('paced_lag_s'):>6.1f} | {med('spans_per_s'):>7,.0f} {med('p50_ms'):>7.1f} {med('p99_ms'):>7.1f} "
              f"{med('lag_s'):>6.1f} {med('rss_growth_mb'):>8.1f}")
        failed = [e for r in rounds for e in r["errors"]]
        if failed:
            print(f"  answers other than 200: {json.dumps(failed[:5])}")


if __name__ == "__main__":
    main(sys.argv[1:])
