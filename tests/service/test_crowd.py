"""A crowd of readers against a real ``assay serve`` (127.0.0.1) while a run is graded, on both
databases: 1,000 clients at once, each with its own connection, each asking for the run.

Every request is answered (200, or 503 with ``Retry-After`` once the line for the database is
full: ``server.admission``), never a 500 nor silence; ``/ready``, asked every 100 ms throughout,
answers 200 within a second each time; and the run finishes with every result, once (grading
has a pool of its own, ``server.service``). The figures go to the test's output (``-s``)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import event_loop  # tests/event_loop.py
import httpx2 as httpx
import pytest
from served import Server, check_results, new_token, start_run, wait_for_run

pytestmark = pytest.mark.slow
CLIENTS = 1000
ROWS = 240


WATCH = """
import json, sys, time
import httpx2 as httpx
stop = time.monotonic() + float(sys.argv[2])
seen = []
with httpx.Client(timeout=10) as client:
    while time.monotonic() < stop:
        began = time.perf_counter()
        try:
            status = str(client.get(sys.argv[1] + "/ready").status_code)
        except httpx.HTTPError as error:
            status = type(error).__name__
        seen.append([status, time.perf_counter() - began])
        time.sleep(0.1)
print(json.dumps(seen))
"""
"""``/ready`` every 100 ms for a while, from a process of its own: the crowd's event loop in this
process would delay the watcher's own requests and count that as the server's."""


def watch_ready(server: Server, seconds: float) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-c", WATCH, server.base, str(seconds)], stdout=subprocess.PIPE,
                            text=True)  # ends by itself after ``seconds``


async def crowd(server: Server, token: str, run_id: str) -> Counter[str]:
    """``CLIENTS`` GETs of the run at once; returns the answers counted by status (or by error)."""
    limits = httpx.Limits(max_connections=CLIENTS, max_keepalive_connections=0)
    headers = {"Authorization": f"Bearer {token}"}
    answers: Counter[str] = Counter()

    async with httpx.AsyncClient(base_url=server.base, limits=limits, timeout=60, headers=headers) as client:

        async def one() -> None:
            try:
                answer = await client.get(f"/api/v1/runs/{run_id}")
            except httpx.HTTPError as error:
                answers[type(error).__name__] += 1
                return
            answers[str(answer.status_code)] += 1
            if answer.status_code == 503:
                assert answer.headers.get("retry-after") and answer.json()["message"], answer.text

        await asyncio.gather(*(one() for _ in range(CLIENTS)))
    return answers


def test_a_thousand_readers_at_once_are_all_answered_while_the_run_goes_on(db_url: str, tmp_path: Path):
    env = {**os.environ, "ASSAY_DATABASE_URL": db_url, "ASSAY_JUDGE_CACHE": "off", "ASSAY_RUN_SLICE_SIZE": "8",
           "ASSAY_QUEUE_POLL_MS": "100"}
    token = new_token(env, tmp_path)
    (tmp_path / "server").mkdir()
    server = Server(tmp_path / "server", env)
    try:
        server.wait_ready(token)
        with server.client(token) as client:
            run_id = start_run(client, ROWS, sleep_s=0.02, name="crowded")
            watcher = watch_ready(server, 5.0)
            time.sleep(0.5)  # the watcher's interpreter is up
            before = client.get(f"/runs/{run_id}").json()["data"]
            assert before["status"] in ("queued", "running") and before["done"] < before["total"], before
            began = time.perf_counter()
            answers = event_loop.run(crowd(server, token, run_id))
            took = time.perf_counter() - began
            out, _ = watcher.communicate(timeout=30)
            said = [status for status, _ in json.loads(out)]
            latencies = [seconds for _, seconds in json.loads(out)]
            after = client.get(f"/runs/{run_id}").json()["data"]
            scraped = httpx.get(f"{server.base}/metrics", timeout=10).text
            run = wait_for_run(client, run_id, 90)
            finished = time.perf_counter() - began
            check_results(client, run, ROWS)
    finally:
        server.stop()
    load = os.getloadavg()
    print(f"\n{db_url.split(':')[0]}: {CLIENTS} clients answered in {took:.2f} s: {dict(answers)}; /ready x{len(said)} "
          f"max {max(latencies) * 1000:.0f} ms, median {sorted(latencies)[len(latencies) // 2] * 1000:.0f} ms; "
          f"the run: {before['done']}/{before['total']} results before, {after['done']} after the crowd, completed "
          f"{finished:.1f} s after it began; load average {load[0]:.2f}")
    assert sum(answers.values()) == CLIENTS and set(answers) <= {"200", "503"}, answers  # no 500, no silence
    assert answers["200"] >= 20, answers  # the pool served its share
    assert f"assay_database_requests_refused_total {answers['503']}.0" in scraped  # each refusal counted
    assert set(said) == {"200"} and max(latencies) < 1.0, (said, latencies)
    assert "Traceback" not in server.log.read_text(), server.log.read_text()[-5000:]
