"""Talk to one worker: its hello, then one numbered request and its answer at a time.

The protocol (``worker.js`` describes it): newline-delimited JSON both ways. The worker first
writes ``{"ready": true, ...}`` or ``{"ready": false, "error": ...}``; then each request line
``{"id", "op": "call" | "check", ...}`` gets one response line carrying the same ``id``.
A response is untrusted text: it is parsed by ``sandbox.results`` under its caps, and anything
out of protocol means the worker can no longer be trusted to answer (``WorkerGone``).
"""

from __future__ import annotations

import json
from typing import Any

from assay.sandbox.node.handle import Worker, WorkerGone
from assay.sandbox.results import load_json


def handshake(worker: Worker, deadline: float) -> str | None:
    """None when the worker said it is ready before ``deadline``; else why it is not."""
    try:
        hello = json.loads(worker.read_line(deadline))
    except (WorkerGone, ValueError, TimeoutError) as exc:
        return f"the Node worker did not start ({exc or 'no answer'}): {worker.stderr_tail()}"
    if not isinstance(hello, dict):
        return "the Node worker did not start (it wrote no hello)"
    return None if hello.get("ready") else str(hello.get("error") or "the Node worker did not start")


def exchange(worker: Worker, payload: dict[str, Any], deadline: float) -> dict[str, Any]:
    """Send ``payload`` (numbered here) and return the worker's response to it.

    Raises ``TimeoutError`` past ``deadline`` and ``WorkerGone`` when the worker exits or
    answers out of protocol; either way the worker must be killed, not reused.
    """
    worker.seq += 1
    payload["id"] = worker.seq
    # ASCII with escapes: a lone surrogate in a sample reaches the evaluator as it is (as in
    # Python) instead of failing to encode as UTF-8.
    worker.send(json.dumps(payload, allow_nan=False).encode() + b"\n")
    try:
        response = load_json(worker.read_line(deadline))
    except ValueError as exc:  # TooDeep included: the worker's own envelope is flat
        raise WorkerGone(f"the worker wrote a malformed response ({str(exc).split(':')[0]})") from None
    if not isinstance(response, dict) or response.get("id") != worker.seq:
        raise WorkerGone("the worker answered out of turn")
    return response
