"""1,000 judge calls through ``OpenAIJudgeClient.judge_many`` against a local
OpenAI-compatible server that answers every call in 50 ms.

The floor is ``calls x latency / concurrency``: what a perfect client would take with the
default concurrency. The client should land within 10 % of it and under 10 s. The endpoint
(bench/_judge_endpoint.py, asyncio) runs in a child process, so its work does not share this
interpreter's GIL with the client. For comparison the same calls are made against the tests'
threaded server (tests/judge_server.py), whose own ~1.5 ms per request count against the
client. Run: ``.venv/bin/python bench/judges.py [--calls N] [--rounds R]``.
"""

from __future__ import annotations

import argparse
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

from assay.core.judge import JudgeMessage, JudgeRequest
from assay.judges import OpenAIJudgeClient
from assay.settings import Settings

HERE = Path(__file__).resolve().parent
TESTS = HERE.parent / "tests"
LATENCY_S = 0.05
THREADED = f"""
import sys, time
sys.path.insert(0, {str(TESTS)!r})
from judge_server import JudgeServer, slow
with JudgeServer(default=slow({LATENCY_S})) as server:
    print(server.url, flush=True)
    sys.stdin.read()  # until the parent closes our stdin
"""


def one_run(url: str, calls: int, concurrency: int) -> float:
    client = OpenAIJudgeClient(base_url=url, api_key="bench", model="bench-judge", concurrency=concurrency)
    try:
        client.judge(_request(-1))  # connect and import once, outside the timing
        requests = [_request(i) for i in range(calls)]
        start = time.perf_counter()
        replies = client.judge_many(requests)
        elapsed = time.perf_counter() - start
    finally:
        client.close()
    failed = [r for r in replies if not r.ok]
    if failed:
        raise SystemExit(f"{len(failed)} judge calls failed, e.g. {failed[0].message}")
    return elapsed


def _round_trip(url: str, n: int = 40) -> float:
    host, port = url.split("//", 1)[1].split("/", 1)[0].rsplit(":", 1)
    body = b'{"model": "m", "messages": []}'
    request = b"POST /v1/chat/completions HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n" \
              b"Content-Length: %d\r\n\r\n%s" % (host.encode(), len(body), body)
    times = []
    with socket.create_connection((host, int(port))) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        reader = sock.makefile("rb")
        for _ in range(n):
            start = time.perf_counter()
            sock.sendall(request)
            length = 0
            while (line := reader.readline()) not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            reader.read(length)
            times.append(time.perf_counter() - start)
    return statistics.median(times)


def _request(i: int) -> JudgeRequest:
    return JudgeRequest(messages=(JudgeMessage("system", "Grade the answer from 1 to 5 as JSON."),
                                  JudgeMessage("user", f"Answer #{i}: Paris is the capital of France.")),
                        schema={"name": "verdict", "schema": {"type": "object"}})


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    concurrency = Settings().judge_concurrency
    floor = args.calls * LATENCY_S / concurrency
    figures = {}
    for label, argv in (("asyncio endpoint", [str(HERE / "_judge_endpoint.py"), "--latency", str(LATENCY_S)]),
                        ("threaded test server", ["-c", THREADED])):
        times, measured = _timed(argv, args.calls, args.rounds, concurrency)
        wall = statistics.median(times)
        figures[label] = wall
        real_floor = args.calls * measured / concurrency
        print(f"judges vs {label}: {args.calls:,} calls, {LATENCY_S * 1000:.0f} ms each, concurrency {concurrency}: "
              f"{wall:.2f} s (median of {args.rounds}); floor {floor:.2f} s; ratio {wall / floor:.3f} "
              f"(target <= 1.10 and < 10 s); runs {', '.join(f'{t:.2f}' for t in times)}\n"
              f"    the endpoint's own round trip (bare socket client) is {measured * 1000:.2f} ms: "
              f"floor at that latency {real_floor:.2f} s, ratio {wall / real_floor:.3f}")
    wall = figures["asyncio endpoint"]
    return {"wall_s": wall, "floor_s": floor, "ratio": wall / floor, "concurrency": concurrency,
            "threaded_wall_s": figures["threaded test server"]}


def _timed(argv: list[str], calls: int, rounds: int, concurrency: int) -> tuple[list[float], float]:
    """Wall times of ``rounds`` runs, and the endpoint's median round trip seen by a bare
    socket client (what "answers in 50 ms" really is, timer slack and loopback included)."""
    server = subprocess.Popen([sys.executable, *argv], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        url = server.stdout.readline().strip()
        return [one_run(url, calls, concurrency) for _ in range(rounds)], _round_trip(url)
    finally:
        server.stdin.close()
        server.wait(timeout=10)


if __name__ == "__main__":
    main()
