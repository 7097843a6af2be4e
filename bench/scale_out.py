"""Scaling out: N ``assay serve`` processes on one PostgreSQL, and where the database starts to
limit them.

For each N in ``--servers`` (default 1,2,3) a fresh database gets N servers (``run_queue.Fleet``:
real processes, each in its own folder, users and tokens made with the real CLI); a task of
``--rows`` samples graded by the exact_match and contains presets is run ``--rounds`` times
(after a warm-up run). Per round: results/s from start to ``completed``; each server's share of
the results, read from its own ``/metrics`` (``assay_results_stored_total`` before and after);
and the CPU-seconds the servers and the database spent, read from ``/proc`` (each server's
process; PostgreSQL's whole process tree, its reaped backends included). Printed per N: the
median results/s in all and per server, the spread of the work across servers, and the
database's share of the CPU the run cost. Where that share nears the database's part of the
machine, the database is the limit: adding servers on the same machine only adds contention.

This machine has 2 cores, shared by the servers, the database and this driver, so the figures
here show correctness (every server takes work, every run completes with every result) and the
per-result CPU split, not the scaling a bigger machine would show. The method for one: run this
with ``--servers 1,2,4,8`` on a machine with cores to spare for each server and the database,
and read where results/s per server starts to fall while the database's CPU share rises.
Every process started is stopped by its pid.
Run: ``.venv/bin/python bench/scale_out.py [--quick] [--servers 1,2,3] [--rows N] [--rounds N]``.
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import time
from pathlib import Path

import httpx2 as httpx

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests" / "service"))

from pg_server import PostgresServer, missing  # noqa: E402
from run_queue import Fleet, presets, run_to_done, size_options, sizes, task  # noqa: E402

TICK = os.sysconf("SC_CLK_TCK")
STORED = re.compile(r"^assay_results_stored_total (\S+)$", re.M)


def cpu_seconds(pid: int, tree: bool = False) -> float:
    """CPU-seconds a process spent (with its reaped children's), and with ``tree`` its live
    descendants' too."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    total = sum(int(x) for x in fields[11:15]) / TICK  # utime, stime, cutime, cstime
    if tree:
        for child in children(pid):
            total += cpu_seconds(child, tree=True)
    return total


def children(pid: int) -> list[int]:
    out = []
    for task_dir in Path(f"/proc/{pid}/task").glob("*"):
        try:
            out += [int(x) for x in (task_dir / "children").read_text().split()]
        except OSError:
            continue
    return out


def stored(port: int) -> float:
    text = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=30).text
    match = STORED.search(text)
    return float(match.group(1)) if match else 0.0


def scale(pg: PostgresServer, servers: int, rows: int, rounds: int) -> dict[str, float]:
    fleet = Fleet(pg.new_database(), servers)
    try:
        with fleet.client("alice") as client:
            task_id = task(client, rows, presets(client))
            run_to_done(client, task_id)  # warm: every server's first run starts its graders
            rates, spreads, db_shares, cpu_per_k = [], [], [], []
            for _ in range(rounds):
                before = [stored(port) for port in fleet.ports]
                cpu_before = [cpu_seconds(p.pid) for p in fleet.processes], cpu_seconds(pg.process.pid, tree=True)
                elapsed, run = run_to_done(client, task_id)
                time.sleep(0.3)  # the last results' metrics
                done = [stored(port) - b for port, b in zip(fleet.ports, before, strict=True)]
                servers_cpu = sum(cpu_seconds(p.pid) for p in fleet.processes) - sum(cpu_before[0])
                db_cpu = cpu_seconds(pg.process.pid, tree=True) - cpu_before[1]
                assert sum(done) == run["total"], (done, run["total"])  # every result once, by some server
                rates.append(run["total"] / elapsed)
                spreads.append(min(done) / max(done) if max(done) else 0.0)
                db_shares.append(db_cpu / (db_cpu + servers_cpu) if db_cpu + servers_cpu else 0.0)
                cpu_per_k.append(1e6 * (db_cpu + servers_cpu) / run["total"])  # CPU-ms per 1,000 results
        return {"servers": servers, "rate": statistics.median(rates), "per_server": statistics.median(rates) / servers,
                "spread": statistics.median(spreads), "db_share": statistics.median(db_shares),
                "cpu_ms_per_k": statistics.median(cpu_per_k)}
    finally:
        fleet.stop()


def report(rows: int, rounds: int, figures: list[dict[str, float]]) -> None:
    load = os.getloadavg()[0]
    print(f"scale-out on one PostgreSQL, {rows:,} samples x 2 presets, median of {rounds} (load {load:.1f}, "
          f"{os.cpu_count()} cores shared by servers, database and driver)")
    print(f"{'servers':>8} {'results/s':>10} {'per server':>11} {'least/most':>11} {'db CPU share':>13} "
          f"{'CPU ms/1k results':>18}")
    for f in figures:
        print(f"{f['servers']:>8.0f} {f['rate']:>10,.0f} {f['per_server']:>11,.0f} {f['spread']:>11.2f} "
              f"{f['db_share']:>12.0%} {f['cpu_ms_per_k']:>18,.0f}")


def main(argv: list[str] | None = None) -> list[dict[str, float]] | None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    size_options(parser)
    parser.add_argument("--servers", default="1,2,3", help="the fleet sizes to measure, comma-separated")
    args = parser.parse_args(argv)
    problem = missing()
    if problem:
        print(f"scale-out: {problem}; not measured")
        return None
    rows, rounds = sizes(args)
    pg = PostgresServer().start()
    try:
        figures = [scale(pg, int(n), rows, rounds) for n in args.servers.split(",")]
    finally:
        pg.stop()
    report(rows, rounds, figures)
    return figures


if __name__ == "__main__":
    main(sys.argv[1:])
