"""Shared by the online benchmarks: OTLP export requests made fast and posted as exporters do.

A batch of GenAI chat spans (current conventions, content captured, ~600 bytes of attributes
each) is built and serialised once; every request after is that body with new random trace
and span ids written over the old ones at their byte offsets, so each span is new to the
server and making a request costs the client next to nothing (it must not be what limits the
rate measured). Exporters post over kept-alive connections, one request at a time each, as
``BatchSpanProcessor`` does; a 429 or 503 is retried after its ``Retry-After``.
"""

from __future__ import annotations

import http.client
import os
import threading
import time
from dataclasses import dataclass, field

from otlp_build import NOW_NS, chat_attributes, request, span


class Batches:
    """Request bodies of ``size`` new spans each."""

    def __init__(self, size: int) -> None:
        spans, ids = [], []
        for i in range(size):
            trace, span_id = os.urandom(16), os.urandom(8)
            ids += [trace, span_id]
            model = "gpt-4o" if i % 2 else "gpt-4o-mini"
            spans.append(span(trace, span_id, "chat " + model,
                              chat_attributes(f"question {i}: what is the capital of France?",
                                              "Paris." if i % 3 else "Lyon.", model=model),
                              start_ns=NOW_NS + i * 1000))
        self.template = request(*spans).SerializeToString()
        self.size = size
        self.offsets = [(self.template.index(value), len(value)) for value in ids]

    def next(self) -> bytes:
        body = bytearray(self.template)
        fresh = os.urandom(sum(n for _, n in self.offsets))
        at = 0
        for offset, n in self.offsets:
            body[offset:offset + n] = fresh[at:at + n]
            at += n
        return bytes(body)


@dataclass
class Tally:
    """What the exporters saw: each request's latency (ms), the spans accepted, the refusals."""

    latencies: list[float] = field(default_factory=list)
    spans: int = 0
    refused: int = 0
    errors: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def p(self, quantile: float) -> float:
        ordered = sorted(self.latencies)
        return ordered[min(len(ordered) - 1, int(len(ordered) * quantile))] if ordered else float("nan")


def export(port: int, token: str, exporters: int, size: int, *, until: float, rate: float | None = None,
           total: int | None = None) -> Tally:
    """``exporters`` threads posting batches of ``size`` spans until ``until`` (monotonic) or
    until ``total`` spans are in. With ``rate`` (spans/s over all exporters) each sends on a
    fixed schedule and a request's latency counts from when it was due, so a slow answer that
    delays the next send is counted too; without it they send back to back (saturation)."""
    tally = Tally()
    budget = [total if total is not None else 1 << 62]
    made = [Batches(size) for _ in range(exporters)]  # before the clock starts: the first sends are due at once
    started = time.monotonic()
    interval = exporters * size / rate if rate else 0.0

    def one(n: int) -> None:
        batches = made[n]
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
        headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/x-protobuf"}
        due = started + n * interval / exporters
        while time.monotonic() < until:
            with tally.lock:
                if budget[0] <= 0:
                    break
                budget[0] -= size
            body = batches.next()
            if rate:
                time.sleep(max(0.0, due - time.monotonic()))
            sent = due if rate else time.monotonic()
            while True:
                connection.request("POST", "/v1/traces", body=body, headers=headers)
                response = connection.getresponse()
                response.read()
                if response.status not in (429, 503):
                    break
                with tally.lock:
                    tally.refused += 1
                time.sleep(float(response.getheader("Retry-After") or 1))
            with tally.lock:
                tally.latencies.append((time.monotonic() - sent) * 1000)
                if response.status == 200:
                    tally.spans += size
                elif len(tally.errors) < 5:
                    tally.errors.append(str(response.status))
            due += interval
        connection.close()

    threads = [threading.Thread(target=one, args=(n,)) for n in range(exporters)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return tally

