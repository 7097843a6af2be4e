"""The edge of a live ``assay serve`` (raw sockets on 127.0.0.1): bounded heads (431), heads
and bodies that stall (408), uploads over their limit (413, declared or chunked), request ids,
security headers, HTTP metrics and JSON log lines (issue 35, items 3 and 7)."""

from __future__ import annotations

import json
import os
import select
import threading
import time
import uuid

import httpx2 as httpx
import pytest
from live_serve import Serve, assay, read_answer

HEAD_LIMIT = 8192
HEADERS_LIMIT = 20
UPLOAD_LIMIT = 65536


@pytest.fixture(scope="module")
def live(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("edge")
    env = {**os.environ, "ASSAY_DATABASE_URL": f"sqlite:///{tmp / 'assay.db'}", "ASSAY_JUDGE_CACHE": "off",
           "ASSAY_API_MAX_HEADER_BYTES": str(HEAD_LIMIT), "ASSAY_API_MAX_HEADERS": str(HEADERS_LIMIT),
           "ASSAY_API_HEADER_TIMEOUT_S": "1", "ASSAY_API_BODY_TIMEOUT_S": "1",
           "ASSAY_API_MAX_UPLOAD_BYTES": str(UPLOAD_LIMIT)}
    assert assay("users", "create", "alice", env=env).returncode == 0
    token = assay("tokens", "create", "alice", env=env).stdout.strip().splitlines()[-1]
    server = Serve(env, tmp / "server.log", "--log-format", "json", "--log-level", "debug").start()
    try:
        yield server, token
    finally:
        server.stop()


def head_of(size: int, path: str = "/health", extra: str = "") -> bytes:
    """A GET whose request line and headers are exactly ``size`` bytes."""
    start = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{extra}X-Pad: ".encode()
    pad = size - len(start) - len(b"\r\n\r\n")
    assert pad >= 0
    return start + b"p" * pad + b"\r\n\r\n"


def ask(live_server: Serve, request: bytes) -> tuple[int, dict[str, str], bytes]:
    with live_server.connect() as sock:
        sock.sendall(request)
        return read_answer(sock)


def assert_identified(headers: dict[str, str], body: bytes) -> dict:
    """An answer with a request id (header and body agree), nosniff and a CSP."""
    error = json.loads(body)
    assert len(headers["x-request-id"]) >= 8 and error["requestId"] == headers["x-request-id"]
    assert headers["x-content-type-options"] == "nosniff"
    assert "default-src 'self'" in headers["content-security-policy"]
    return error


def test_four_64_mib_headers_are_refused_with_431_and_cost_the_server_no_memory(live):
    server, _token = live
    before = server.memory_mb()
    answers: list[tuple[int, dict[str, str], bytes]] = []
    sent: list[int] = []

    def client() -> None:
        with server.connect(timeout=30) as sock:
            sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ")
            chunk, total = b"a" * (1 << 20), 0
            for _ in range(64):  # as a client does: stop sending once the server has answered
                if select.select([sock], [], [], 0)[0]:
                    break
                try:
                    sock.sendall(chunk)
                except OSError:
                    break
                total += len(chunk)
            sent.append(total)
            answers.append(read_answer(sock))

    threads = [threading.Thread(target=client) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    after = server.memory_mb()
    assert [status for status, _, _ in answers] == [431] * 4
    error = assert_identified(answers[0][1], answers[0][2])
    assert error["code"] == 431 and "8,192 bytes" in error["message"] and answers[0][1]["connection"] == "close"
    # Before the limit each of these was read whole: +321 MB of peak memory for the four.
    assert after["VmHWM"] - before["VmHWM"] < 16, (before, after, sent)
    assert httpx.get(server.url + "/health").status_code == 200


def test_a_head_at_the_limit_is_served_and_one_byte_more_is_431(live):
    server, _token = live
    assert ask(server, head_of(HEAD_LIMIT))[0] == 200
    status, headers, body = ask(server, head_of(HEAD_LIMIT + 1))
    assert status == 431 and assert_identified(headers, body)["messageCode"] == "api.head_too_large"


def test_at_most_the_limit_of_header_lines(live):
    server, _token = live
    many = "".join(f"X-H{i}: {i}\r\n" for i in range(HEADERS_LIMIT - 2))  # with Host and X-Pad: the limit
    assert ask(server, head_of(1000, extra=many))[0] == 200
    status, headers, body = ask(server, head_of(1000, extra=many + "X-One-More: 1\r\n"))
    assert status == 431 and assert_identified(headers, body)["messageCode"] == "api.too_many_headers"


def test_a_head_that_stalls_is_408_and_a_silent_connection_is_closed(live):
    server, _token = live
    with server.connect() as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        started = time.monotonic()
        status, headers, body = read_answer(sock)
        waited = time.monotonic() - started
    assert status == 408 and assert_identified(headers, body)["messageCode"] == "api.head_timeout"
    assert 0.9 <= waited < 5, waited
    with server.connect() as sock:
        started = time.monotonic()
        assert sock.recv(1024) == b""  # closed, nothing said: nothing was asked
        assert 0.9 <= time.monotonic() - started < 5


def test_a_body_that_stops_flowing_is_408_on_json_and_upload_routes(live):
    server, token = live
    json_head = (f"POST /api/v1/evaluators HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {token}\r\n"
                 "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n").encode()
    upload_head = (f"PUT /api/v1/tasks/{uuid.uuid4()}/dataset HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                   f"Authorization: Bearer {token}\r\nContent-Type: multipart/form-data; boundary=b\r\n"
                   "Transfer-Encoding: chunked\r\n\r\n").encode()
    piece = b"--b\r\nContent-Disposition: form-"
    for request in (json_head + b'{"name": ', upload_head + f"{len(piece):x}\r\n".encode() + piece + b"\r\n"):
        with server.connect() as sock:
            sock.sendall(request)
            started = time.monotonic()
            status, headers, body = read_answer(sock)
            waited = time.monotonic() - started
        assert status == 408 and assert_identified(headers, body)["messageCode"] == "api.body_timeout"
        assert 0.9 <= waited < 5, waited


def test_an_upload_over_its_declared_limit_is_413_before_a_byte_of_it_is_sent(live):
    server, token = live
    head = (f"PUT /api/v1/tasks/{uuid.uuid4()}/dataset HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            f"Authorization: Bearer {token}\r\nContent-Type: multipart/form-data; boundary=b\r\n"
            f"Content-Length: {10 << 30}\r\nExpect: 100-continue\r\n\r\n").encode()
    status, headers, body = ask(server, head)
    assert status == 413 and "65,536 bytes" in assert_identified(headers, body)["message"]


def test_a_chunked_multipart_upload_past_the_limit_is_413_not_400(live):
    server, token = live

    def parts():
        yield (b'--b\r\nContent-Disposition: form-data; name="file"; filename="d.jsonl"\r\n'
               b"Content-Type: application/octet-stream\r\n\r\n")
        for i in range(200):
            yield json.dumps({"id": f"r{i}", "input": "x" * 500}).encode() + b"\n"
        yield b"\r\n--b--\r\n"

    answer = httpx.put(f"{server.url}/api/v1/tasks/{uuid.uuid4()}/dataset", content=parts(), timeout=30,
                       headers={"Authorization": f"Bearer {token}", "Content-Type": "multipart/form-data; boundary=b"})
    assert answer.status_code == 413, answer.text
    assert "65,536 bytes" in answer.json()["message"]
    assert answer.json()["requestId"] == answer.headers["x-request-id"]


def test_every_answer_has_a_request_id_nosniff_and_a_policy(live):
    server, token = live
    ok = httpx.get(server.url + "/health")
    assert ok.status_code == 200 and len(ok.headers["x-request-id"]) == 16
    assert ok.headers["x-content-type-options"] == "nosniff" and "script-src 'self'" in ok.headers[
        "content-security-policy"]
    unauthorized = httpx.get(server.url + "/api/v1/evaluators")
    assert unauthorized.status_code == 401
    assert unauthorized.json()["requestId"] == unauthorized.headers["x-request-id"] != ok.headers["x-request-id"]
    theirs = httpx.get(server.url + "/api/v1/runs/nope", headers={"Authorization": f"Bearer {token}",
                                                                   "X-Request-Id": "lb-trace-1"})
    assert theirs.status_code == 404 and theirs.headers["x-request-id"] == "lb-trace-1"
    assert theirs.json()["requestId"] == "lb-trace-1"
    junk = httpx.get(server.url + "/health", headers={"X-Request-Id": "no spaces or " + "x" * 100})
    assert junk.headers["x-request-id"] != "no spaces or " + "x" * 100 and len(junk.headers["x-request-id"]) == 16
    page = httpx.get(server.url + "/signin")
    assert page.status_code == 200 and page.headers["content-security-policy"].startswith("default-src 'self'")
    docs = httpx.get(server.url + "/docs")
    assert "https://cdn.jsdelivr.net" in docs.headers["content-security-policy"]


def test_metrics_count_requests_by_route_template_and_refusals_by_reason(live):
    server, token = live
    for _ in range(3):
        httpx.get(server.url + f"/api/v1/runs/{uuid.uuid4()}", headers={"Authorization": f"Bearer {token}"})
    text = httpx.get(server.url + "/metrics").text
    lines = {line.rsplit(" ", 1)[0]: float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
             if line and not line.startswith("#")}
    assert lines['assay_http_requests_total{method="GET",route="/api/v1/runs/{run_id}",status="404"}'] >= 3
    assert lines['assay_http_request_seconds_count{method="GET",route="/api/v1/runs/{run_id}"}'] >= 3
    assert not any("/api/v1/runs/" in key and "{run_id}" not in key for key in lines)  # no id became a label
    assert lines['assay_http_refused_total{reason="head_too_large"}'] >= 5
    assert lines['assay_http_refused_total{reason="too_many_headers"}'] >= 1
    assert lines['assay_http_refused_total{reason="head_timeout"}'] >= 1
    assert lines['assay_http_refused_total{reason="body_timeout"}'] >= 2


def test_every_log_line_is_json_and_carries_the_request_id(live):
    server, _token = live
    lines = [line for line in server.log.read_text().splitlines() if line.strip()]
    entries = []
    for line in lines:
        try:
            entries.append(json.loads(line))
        except ValueError:
            pytest.fail(f"a log line that is not JSON: {line[:300]}")
    access = [e for e in entries if e["logger"] == "uvicorn.access" and e.get("request_id") == "lb-trace-1"]
    assert access and access[0]["status"] == 404 and "/api/v1/runs/nope" in access[0]["request"]
    refused = [e for e in entries if e["logger"] == "assay.server.edge" and "8,192 bytes" in e["message"]]
    assert refused and all(len(e["request_id"]) == 16 for e in refused)


def test_the_processes_of_workers_n_bound_heads_and_log_json_too(tmp_path):
    env = {**os.environ, "ASSAY_DATABASE_URL": f"sqlite:///{tmp_path / 'assay.db'}", "ASSAY_JUDGE_CACHE": "off",
           "ASSAY_API_MAX_HEADER_BYTES": str(HEAD_LIMIT)}
    server = Serve(env, tmp_path / "server.log", "--workers", "2", "--log-format", "json",
                   "--log-level", "debug").start()
    try:
        for _ in range(6):  # new connections: both processes answer some
            assert ask(server, head_of(HEAD_LIMIT + 1))[0] == 431
            assert httpx.get(server.url + "/health", headers={"X-Request-Id": "w-1"}).status_code == 200
    finally:
        server.stop()
    entries = [json.loads(line) for line in server.log.read_text().splitlines() if line.strip()]
    assert len({e.get("message") for e in entries if e["logger"] == "uvicorn.error"}) > 1
    access = [e for e in entries if e["logger"] == "uvicorn.access" and e.get("request_id") == "w-1"]
    assert len(access) == 6 and all(e["status"] == 200 for e in access)


def test_an_unexpected_failure_is_a_500_with_its_request_id_and_headers(tmp_path, shared_resources, caplog):
    """On uvicorn on 127.0.0.1 with the service's protocol: a route that raises (none should)."""
    import uvicorn
    from pg_server import free_port

    from assay.server import create_app
    from assay.server.protocol import PROTOCOL
    from assay.settings import Settings

    app = create_app(Settings(database_url=f"sqlite:///{tmp_path / 'a.db'}"), resources=shared_resources)

    @app.get("/api/v1/boom")
    def boom() -> None:
        raise RuntimeError("kaboom with secret=hunter2")

    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=free_port(), log_level="warning",
                                           http=PROTOCOL, lifespan="on"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        deadline = time.monotonic() + 30
        while not server.started:
            assert time.monotonic() < deadline and thread.is_alive(), "uvicorn did not start"
            time.sleep(0.05)
        url = f"http://127.0.0.1:{server.config.port}/api/v1/boom"
        failed = httpx.get(url, headers={"X-Request-Id": "trace-500"})
    finally:
        server.should_exit = True
        thread.join(30)
    assert failed.status_code == 500 and failed.headers["x-request-id"] == "trace-500"
    error = assert_identified(dict(failed.headers), failed.content)
    assert error["requestId"] == "trace-500" and error["messageCode"] == "failure.with_id"
    assert "hunter2" not in failed.text and "Traceback" not in failed.text
    error_id = error["messageArgs"]["id"]
    logged = [r for r in caplog.records if getattr(r, "error_id", None) == error_id]
    assert len(logged) == 1 and "kaboom" in str(logged[0].exc_info[1])  # the log has it all
