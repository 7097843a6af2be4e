"""A real OpenAI-compatible chat server for tests and benchmarks, on 127.0.0.1 at an
ephemeral port, answering ``POST /v1/chat/completions`` from a script.

The script is either a queue of canned behaviours served in turn (``server.queue(...)``), or
a function of the request body returning one (``server.respond = fn``), so a test can answer
by content; when neither has anything, ``server.default`` answers. Every request is recorded
(headers, body, arrival time) and the server counts the most requests ever in flight.

Behaviours (all ``Behaviour`` values): ``good(content)``, ``good_json(obj)``,
``malformed()``, ``refusal(text)``, ``empty()``, ``status(code, retry_after=...)``,
``slow(seconds)``, ``rejects_response_format()`` (400 when the body has one, else good),
``logprobs({token: probability})`` (the first token and its alternatives, as OpenAI and
llama.cpp send them when the body asks for ``logprobs``).
"""

from __future__ import annotations

import collections
import json
import math
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Behaviour:
    """One scripted answer: an HTTP status, a JSON body (or raw text), headers, and a delay
    before answering. ``unless_format`` answers with ``fallback`` when the request carries no
    ``response_format`` (an endpoint that rejects only that)."""

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0
    unless_format: Behaviour | None = None


def completion(content: str | None, *, refusal: str | None = None, model: str = "judge-test",
               prompt_tokens: int = 11, completion_tokens: int = 7, tool_arguments: str | None = None,
               top_logprobs: dict[str, float] | None = None) -> dict:
    """A chat completion body as OpenAI sends it; ``top_logprobs`` ({token: log-probability})
    become the first token's ``logprobs.content[0].top_logprobs``."""
    message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": refusal}
    if tool_arguments is not None:
        message["tool_calls"] = [{"id": "call_1", "type": "function",
                                  "function": {"name": "verdict", "arguments": tool_arguments}}]
    choice: dict[str, Any] = {"index": 0, "message": message, "finish_reason": "stop"}
    if top_logprobs is not None:
        alternatives = [{"token": t, "logprob": lp, "bytes": list(t.encode())} for t, lp in top_logprobs.items()]
        first = max(alternatives, key=lambda a: a["logprob"]) if alternatives else {"token": content, "logprob": 0.0}
        choice["logprobs"] = {"content": [{**first, "top_logprobs": alternatives}]}
    return {"id": "chatcmpl-test", "object": "chat.completion", "created": int(time.time()), "model": model,
            "choices": [choice],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens}}


def good(content: str = '{"score": 5, "reasoning": "fine"}', **kw: Any) -> Behaviour:
    return Behaviour(body=completion(content, **kw))


def good_json(obj: Any, **kw: Any) -> Behaviour:
    return good(json.dumps(obj), **kw)


def logprobs(probabilities: dict[str, float], **kw: Any) -> Behaviour:
    """A one-token reply whose alternatives have these probabilities (the likeliest is the
    content), as a server answers ``logprobs: true, top_logprobs: N``."""
    top = {token: math.log(p) for token, p in probabilities.items()}
    content = max(top, key=lambda t: top[t]) if top else "?"
    return Behaviour(body=completion(content, top_logprobs=top, completion_tokens=1, **kw))


def malformed() -> Behaviour:
    return good('{"score": 5, "reasoning": "unterminated')


def refusal(text: str = "I can't help with that.") -> Behaviour:
    return Behaviour(body=completion(None, refusal=text))


def empty() -> Behaviour:
    return Behaviour(body=completion(""))


def status(code: int, *, retry_after: str | None = None, message: str = "scripted failure") -> Behaviour:
    headers = {"Retry-After": retry_after} if retry_after is not None else {}
    return Behaviour(status=code, body={"error": {"message": message, "type": "test", "code": None}}, headers=headers)


def slow(seconds: float, then: Behaviour | None = None) -> Behaviour:
    b = then or good()
    return Behaviour(status=b.status, body=b.body, headers=b.headers, delay_s=seconds)


def rejects_response_format(then: Behaviour | None = None) -> Behaviour:
    rejection = status(400, message="Invalid parameter: 'response_format' of type 'json_schema' is not supported")
    return Behaviour(status=rejection.status, body=rejection.body, unless_format=then or good())


@dataclass
class Recorded:
    headers: dict[str, str]
    body: dict[str, Any]
    at: float


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 512  # read by listen(): a burst of clients connecting at once is not reset


class JudgeServer:
    """The server; ``url`` is the base URL to give a client (ends in ``/v1``)."""

    def __init__(self, default: Behaviour | None = None) -> None:
        self.default = default or good()
        self.respond: Callable[[dict[str, Any]], Behaviour | None] | None = None
        self.requests: list[Recorded] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._queue: collections.deque[Behaviour] = collections.deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._httpd = _Server(("127.0.0.1", 0), _handler(self))
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="judge-test-server", daemon=True)

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def start(self) -> JudgeServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # wakes slow handlers
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> JudgeServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def queue(self, *behaviours: Behaviour) -> None:
        """Serve these, one per request, before falling back to ``respond`` or ``default``."""
        with self._lock:
            self._queue.extend(behaviours)

    def _next(self, body: dict[str, Any]) -> Behaviour:
        with self._lock:
            if self._queue:
                return self._queue.popleft()
        chosen = self.respond(body) if self.respond is not None else None
        return chosen or self.default

    def _enter(self, recorded: Recorded) -> None:
        with self._lock:
            self.requests.append(recorded)
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)

    def _leave(self) -> None:
        with self._lock:
            self.in_flight -= 1


def _handler(server: JudgeServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as real endpoints do

        def setup(self) -> None:
            super().setup()
            # Headers and body go out in two writes; without this, Nagle and delayed ACKs
            # add ~40 ms to every reply on loopback.
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                body = {"_raw": raw.decode("utf-8", "replace")}
            if self.path.rstrip("/") != "/v1/chat/completions":
                self._send(Behaviour(status=404, body={"error": {"message": f"no route {self.path}"}}))
                return
            server._enter(Recorded(headers=dict(self.headers.items()), body=body, at=time.monotonic()))
            try:
                behaviour = server._next(body)
                if behaviour.unless_format is not None and "response_format" not in body:
                    behaviour = behaviour.unless_format
                if behaviour.delay_s and server._stopping.wait(behaviour.delay_s):
                    return
                self._send(behaviour)
            finally:
                server._leave()

        def _send(self, b: Behaviour) -> None:
            payload = b.body if isinstance(b.body, bytes | str) else json.dumps(b.body)
            data = payload.encode() if isinstance(payload, str) else payload
            try:
                self.send_response(b.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for name, value in b.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (a timeout test)

    return Handler
