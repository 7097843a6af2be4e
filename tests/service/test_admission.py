"""``server.admission.DatabaseAdmission``, the door of the requests' pool, driven as the HTTP server
drives it (ASGI calls on one event loop): ``limit`` requests inside at once, ``queue`` more
waiting in order, the rest and those that waited ``wait_s`` refused with 503, ``Retry-After``
and a message; a place is given back however the request ends; exempt paths never wait."""

from __future__ import annotations

import asyncio
import json

import event_loop  # tests/event_loop.py

from assay.server.admission import DatabaseAdmission
from assay.service.metrics import Metrics


class App:
    """Holds every request until ``go`` is set; counts those inside at once."""

    def __init__(self) -> None:
        self.go = asyncio.Event()
        self.inside = 0
        self.most = 0

    async def __call__(self, scope, receive, send) -> None:
        self.inside += 1
        self.most = max(self.most, self.inside)
        try:
            await self.go.wait()
            if scope["path"] == "/boom":
                raise RuntimeError("the route failed")
            await send({"type": "http.response.start", "status": 200, "headers": []})
            await send({"type": "http.response.body", "body": b"ok"})
        finally:
            self.inside -= 1


async def request(door: DatabaseAdmission, path: str = "/api/v1/runs") -> tuple[int, dict[bytes, bytes], bytes]:
    sent: list[dict] = []

    async def send(message: dict) -> None:
        sent.append(message)

    async def receive() -> dict:
        return {"type": "http.request", "body": b"", "more_body": False}

    try:
        await door({"type": "http", "path": path, "method": "GET", "headers": []}, receive, send)
    except RuntimeError:
        return 500, {}, b""
    return sent[0]["status"], dict(sent[0]["headers"]), b"".join(m.get("body", b"") for m in sent[1:])


def test_limit_inside_queue_waiting_and_the_rest_refused_with_retry_after():
    async def run():
        app = App()
        metrics = Metrics()
        door = DatabaseAdmission(app, limit=3, queue=5, wait_s=5.0, exempt=lambda path: path == "/ready",
                                 metrics=metrics)
        tasks = [asyncio.create_task(request(door)) for _ in range(12)]
        await asyncio.sleep(0.05)
        assert app.inside == 3 and door.waiting == 5
        assert b"assay_database_requests_waiting 5.0" in metrics.render()
        assert b"assay_database_requests_refused_total 4.0" in metrics.render()
        exempt = asyncio.create_task(request(door, "/ready"))
        await asyncio.sleep(0.05)
        assert app.inside == 4  # the exempt path went straight in
        app.go.set()
        answers = await asyncio.gather(*tasks)
        await exempt
        return app, door, answers

    app, door, answers = event_loop.run(run())
    statuses = sorted(status for status, _, _ in answers)
    assert statuses == [200] * 8 + [503] * 4 and app.most == 4 and door.refused == 4
    for status, headers, body in answers:
        if status == 503:
            assert headers[b"retry-after"] == b"1"
            assert "busy" in json.loads(body)["message"] and "waiting" in json.loads(body)["message"]


def test_a_request_that_waited_too_long_is_refused_and_places_come_back_after_errors():
    async def run():
        app = App()
        door = DatabaseAdmission(app, limit=1, queue=10, wait_s=0.1)
        first = asyncio.create_task(request(door, "/boom"))
        await asyncio.sleep(0.01)
        late = await request(door)  # the place is held past wait_s
        app.go.set()
        boom = await first  # the route raised: its place is given back
        after = await asyncio.wait_for(request(door), 1)
        return late, boom, after, door

    late, boom, after, door = event_loop.run(run())
    assert late[0] == 503 and "within 100 ms" in json.loads(late[2])["message"]
    assert boom[0] == 500 and after[0] == 200 and door.waiting == 0
