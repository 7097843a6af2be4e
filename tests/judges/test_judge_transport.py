"""The lean HTTP/1.1 transport under the SDK: chunked and gzipped replies, a keep-alive
connection the server closed between calls, ``Connection: close``, and the proxy fallback."""

from __future__ import annotations

import gzip
import json
import socket
import threading

import pytest
from judge_server import Behaviour, completion
from judge_testkit import ask

from assay.core.result import ErrorCode
from assay.judges import Price


class RawServer:
    """Answers each accepted connection's requests from a list of raw replies (bytes), then
    closes the connection when a reply is followed by ``None``."""

    def __init__(self, script: list[bytes | None]) -> None:
        self.script = list(script)
        self.connections = 0
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(10)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while self.script:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            with conn:
                conn.settimeout(10)
                buffer = b""
                while self.script:
                    while b"\r\n\r\n" not in buffer:
                        chunk = conn.recv(65536)
                        if not chunk:
                            break
                        buffer += chunk
                    if b"\r\n\r\n" not in buffer:
                        break
                    head, _, rest = buffer.partition(b"\r\n\r\n")
                    length = int(next(line.split(b":")[1] for line in head.split(b"\r\n")
                                      if line.lower().startswith(b"content-length")))
                    while len(rest) < length:
                        rest += conn.recv(65536)
                    buffer = rest[length:]
                    conn.sendall(self.script.pop(0))
                    if self.script and self.script[0] is None:
                        self.script.pop(0)
                        break

    def close(self) -> None:
        self.sock.close()
        self.thread.join(timeout=10)


def reply(content: str, *, chunked: bool = False, gzipped: bool = False, extra: bytes = b"") -> bytes:
    body = json.dumps(completion(content)).encode()
    headers = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n" + extra
    if gzipped:
        body = gzip.compress(body)
        headers += b"Content-Encoding: gzip\r\n"
    if chunked:
        middle = len(body) // 2
        framed = b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in (body[:middle], body[middle:]))
        return headers + b"Transfer-Encoding: chunked\r\n\r\n" + framed + b"0\r\n\r\n"
    return headers + b"Content-Length: %d\r\n\r\n" % len(body) + body


def test_chunked_and_gzipped_replies_on_one_keep_alive_connection(make_client):
    server = RawServer([reply("one", chunked=True), reply("two", gzipped=True), reply("three", chunked=True,
                                                                                      gzipped=True)])
    try:
        client = make_client(base_url=server.url)
        assert [client.judge(ask()).text for _ in range(3)] == ["one", "two", "three"]
        assert server.connections == 1
    finally:
        server.close()


def test_a_connection_closed_by_the_server_while_idle_is_replaced(make_client):
    server = RawServer([reply("first"), None, reply("second")])  # closes silently after the first
    try:
        client = make_client(base_url=server.url, max_retries=0)
        assert client.judge(ask()).text == "first"
        second = client.judge(ask())
        assert second.ok and second.text == "second" and second.attempts == 1
        assert server.connections == 2
    finally:
        server.close()


def test_connection_close_is_honoured(make_client):
    server = RawServer([reply("a", extra=b"Connection: close\r\n"), None, reply("b")])
    try:
        client = make_client(base_url=server.url, max_retries=0)
        assert [client.judge(ask()).text for _ in range(2)] == ["a", "b"]
    finally:
        server.close()


def test_a_reply_cut_short_is_a_connection_error_not_a_crash(make_client):
    server = RawServer([b"HTTP/1.1 200 OK\r\nContent-Length: 500\r\n\r\n{\"choices\"", None])
    try:
        reply_ = make_client(base_url=server.url, max_retries=0).judge(ask())
        assert reply_.error is ErrorCode.UNAVAILABLE and "connection error" in reply_.message
    finally:
        server.close()


@pytest.mark.parametrize("body", ["<html>proxy login</html>", [], {"choices": "x"}, {"choices": [{"message": 3}]}])
def test_a_body_that_is_not_a_completion_is_unavailable(judge_server, make_client, body):
    judge_server.queue(Behaviour(body=body))
    reply_ = make_client().judge(ask())
    assert reply_.error is ErrorCode.UNAVAILABLE and "not a chat completion" in reply_.message


def test_odd_fields_in_a_completion_do_not_break_the_reply(judge_server, make_client):
    judge_server.queue(Behaviour(body={"choices": [{"message": {"content": "ok"}}], "model": ["odd"],
                                       "usage": {"prompt_tokens": "many", "completion_tokens": 3}}))
    reply_ = make_client(prices={"judge-test": Price(1, 1)}).judge(ask())
    assert reply_.ok and reply_.model == "judge-test" and reply_.usage == {"completion_tokens": 3}
    assert reply_.cost_usd is None


def test_the_lean_transport_only_for_plain_http_without_a_proxy(judge_server, make_client):
    client = make_client(environ={"HTTPS_PROXY": "http://proxy.invalid:3128"})
    assert client._http_client(judge_server.url) is None
    assert make_client()._http_client("https://api.openai.com/v1") is None
    assert make_client()._http_client(judge_server.url) is not None


def test_the_sdk_own_transport_gives_the_same_replies(judge_server, make_client, monkeypatch):
    from judge_server import good, refusal, slow, status

    for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)  # the SDK's stack reads the process environment
    client = make_client(environ={"HTTP_PROXY": "set only to select the SDK's transport"})
    assert client._http_client(judge_server.url) is None
    judge_server.queue(status(429, retry_after="0.05"), good("ok"), refusal("no"), slow(5))
    first = client.judge(ask())
    assert first.ok and first.attempts == 2
    assert client.judge(ask()).message == "the judge refused: no"
    assert client.judge(ask(timeout_s=0.3)).error is ErrorCode.TIMEOUT
