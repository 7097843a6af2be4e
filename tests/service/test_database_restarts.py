"""The service outlives its database (``store.outage``), through real paths: real ``assay serve``
processes on 127.0.0.1 while their real PostgreSQL goes down and comes back mid-run, or while
another process holds SQLite's write lock past the servers' busy timeout.

While the database is away, ``/ready`` answers 503 naming it; the run in progress is neither
failed nor lost: once the database is back it completes with exactly one result per (sample,
evaluator), every server grades the next run (no thread died), and each server logged the
outage once, not once per retry."""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

import httpx2 as httpx
import psycopg
import pytest
from served import Server, check_results, new_token, start_run, wait_for_run

pytestmark = pytest.mark.slow
ROWS = 240
OUTAGE_LOGGED = "the database is unreachable ("
"""What a server logs when an outage begins (``DatabaseHealth.failed``)."""


def ready(server: Server) -> httpx.Response:
    return httpx.get(f"{server.base}/ready", timeout=10)


def wait_ready_says(server: Server, status: int, words: str, seconds: float) -> httpx.Response:
    """``/ready``'s answer once it is ``status`` and names ``words``; fails after ``seconds``."""
    deadline = time.monotonic() + seconds
    while True:
        answer = ready(server)
        if answer.status_code == status and words in answer.text:
            return answer
        assert time.monotonic() < deadline, (answer.status_code, answer.text, server.log.read_text()[-3000:])
        time.sleep(0.05)


def wait_progress(client: httpx.Client, run_id: str, at_least: int) -> None:
    deadline = time.monotonic() + 60
    while (run := client.get(f"/runs/{run_id}").json()["data"])["done"] < at_least:
        assert time.monotonic() < deadline, run
        time.sleep(0.02)
    assert run["status"] == "running", f"the run must still be under way when the database goes: {run}"


def holders(url: str, run_id: str) -> set[str]:
    """The pids of the servers that graded the run's slices."""
    with psycopg.connect(url.replace("postgresql+psycopg", "postgresql")) as conn:
        rows = conn.execute("SELECT holder FROM run_slices WHERE run_id = %s", (run_id,)).fetchall()
    return {holder.split(":")[1] for (holder,) in rows if holder}


def base_env(url: str) -> dict[str, str]:
    return {**os.environ, "ASSAY_DATABASE_URL": url, "ASSAY_JUDGE_CACHE": "off", "ASSAY_RUN_LEASE_S": "3",
            "ASSAY_RUN_SLICE_SIZE": "8", "ASSAY_QUEUE_POLL_MS": "100", "ASSAY_CHANGE_POLL_MS": "200"}


@pytest.mark.postgres
def test_a_postgresql_restart_mid_run_fails_no_run_and_kills_no_grading_thread(own_postgres, tmp_path: Path):
    url = own_postgres.new_database()
    env = base_env(url)
    token = new_token(env, tmp_path)
    servers = [Server(_folder(tmp_path, f"server{n}"), env) for n in range(2)]
    try:
        for server in servers:
            server.wait_ready(token)
        with servers[0].client(token) as client:
            run_id = start_run(client, ROWS, sleep_s=0.03, name="restarted")
            wait_progress(client, run_id, ROWS // 2)

            own_postgres.shut_down()  # pg_ctl restart -m fast, in two steps: the servers see it away
            down = time.monotonic()
            for server in servers:
                said = wait_ready_says(server, 503, "database", 15)
                assert said.headers.get("retry-after"), said.headers
            meanwhile = client.get(f"/runs/{run_id}")  # a request meets the outage: told so, never a 500
            assert meanwhile.status_code == 503 and meanwhile.headers.get("retry-after"), meanwhile.text
            assert "database cannot be reached" in meanwhile.json()["message"], meanwhile.text
            time.sleep(max(0.0, 3.0 - (time.monotonic() - down)))  # away for a lease at least
            own_postgres.launch()
            back = time.monotonic()
            for server in servers:
                assert wait_ready_says(server, 200, "ready", 15).json()["data"]["status"] == "ready"
            ready_after = time.monotonic() - back

            run = wait_for_run(client, run_id, 90)
            check_results(client, run, ROWS)
            print(f"\nPostgreSQL away {back - down:.1f} s; both servers ready {ready_after:.1f} s after it was back, "
                  f"the run completed {time.monotonic() - back:.1f} s after")

            again = wait_for_run(client, start_run(client, ROWS, sleep_s=0.01, name="after"), 90)
            check_results(client, again, ROWS)
        assert holders(url, again["id"]) == {str(server.process.pid) for server in servers}  # both still grade
    finally:
        for server in servers:
            server.stop()
    for server in servers:
        log = server.log.read_text()
        assert 1 <= log.count(OUTAGE_LOGGED) <= 2, log[-5000:]  # once per outage, not per retry
        assert "unexpected error" not in log, log[-5000:]


def test_sqlite_locked_past_the_busy_timeout_mid_run_fails_no_run(tmp_path: Path):
    database = tmp_path / "assay.db"
    env = {**base_env(f"sqlite:///{database}"), "ASSAY_SQLITE_BUSY_MS": "200"}
    token = new_token(env, tmp_path)
    server = Server(_folder(tmp_path, "server"), env)
    try:
        server.wait_ready(token)
        with server.client(token) as client:
            run_id = start_run(client, ROWS, sleep_s=0.02, name="locked")
            wait_progress(client, run_id, ROWS // 2)

            locker = sqlite3.connect(database, isolation_level=None, timeout=30)
            try:
                locker.execute("BEGIN EXCLUSIVE")  # no other writer until COMMIT; readers go on (WAL)
                held = time.monotonic()
                said = wait_ready_says(server, 503, "locked", 15)
                assert said.json()["message"].startswith("this server cannot grade now"), said.text
                time.sleep(max(0.0, 3.0 - (time.monotonic() - held)))
            finally:
                locker.execute("COMMIT")
                locker.close()
            back = time.monotonic()

            run = wait_for_run(client, run_id, 90)
            print(f"\nSQLite locked {back - held:.1f} s; the run completed {time.monotonic() - back:.1f} s after")
            check_results(client, run, ROWS)
            assert wait_ready_says(server, 200, "ready", 15).status_code == 200
    finally:
        server.stop()
    log = server.log.read_text()
    assert 1 <= log.count(OUTAGE_LOGGED) <= 2, log[-5000:]
    assert "unexpected error" not in log, log[-5000:]


def _folder(root: Path, name: str) -> Path:
    """A server's own working directory (nothing is shared but the database)."""
    (root / name).mkdir()
    return root / name
