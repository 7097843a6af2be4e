"""Talk to one worker: its hello, then one numbered request at a time and its answers.

The protocol (``worker.js`` describes it): newline-delimited JSON both ways. The worker first
writes ``{"ready": true, ...}`` or ``{"ready": false, "error": ...}``; then a ``check`` request
gets one response line and a ``batch`` request one line per sample, in order, each carrying the
request's ``id`` (and the sample's ``index``). A response is untrusted text: it is parsed by
``sandbox.results`` under its caps, and anything out of protocol means the worker can no longer
be trusted to answer (``WorkerGone``).
"""

from __future__ import annotations

import json
from typing import Any

from assay.core.messages import Phrase
from assay.sandbox.node.handle import Worker, WorkerGone
from assay.sandbox.results import load_json

NO_START = Phrase("sandbox.node.no_start", "the Node worker did not start ({problem}): {stderr}")
NO_HELLO = Phrase("sandbox.node.no_hello", "the Node worker did not start (it wrote no hello)")
NOT_STARTED = Phrase("sandbox.node.not_started", "the Node worker did not start")
REFUSALS = (Phrase("sandbox.node.no_isolate", "isolated-vm cannot be loaded: {error}"),
            Phrase("sandbox.node.no_ses", "the sandbox cannot be set up (is `ses` installed?): {error}"))
"""The worker's own refusals to start (``worker.js`` writes their words before the error)."""


def handshake(worker: Worker, deadline: float) -> str | None:
    """None when the worker said it is ready before ``deadline``; else why it is not."""
    try:
        hello = json.loads(worker.read_line(deadline))
    except (WorkerGone, ValueError, TimeoutError) as exc:
        return NO_START(problem=str(exc), stderr=worker.stderr_tail())
    if not isinstance(hello, dict):
        return NO_HELLO()
    if hello.get("ready"):
        return None
    error = hello.get("error")
    if not error:
        return NOT_STARTED()
    error = str(error)
    for phrase in REFUSALS:
        words = phrase.text.removesuffix("{error}")
        if error.startswith(words):
            return phrase(error=error[len(words):])
    return error


def exchange(worker: Worker, payload: dict[str, Any], deadline: float) -> dict[str, Any]:
    """Send ``payload`` (numbered here) and return the worker's one response to it.

    Raises ``TimeoutError`` past ``deadline`` and ``WorkerGone`` when the worker exits or
    answers out of protocol; either way the worker must be killed, not reused.
    """
    worker.seq += 1
    payload["id"] = worker.seq
    # ASCII with escapes: a lone surrogate in a sample reaches the evaluator as it is (as in
    # Python) instead of failing to encode as UTF-8.
    worker.send(json.dumps(payload, allow_nan=False).encode() + b"\n")
    return answer(worker, None, deadline)


def send_batch(worker: Worker, header: str, args_json: list[str]) -> None:
    """Send a ``batch`` request (numbered here): ``header`` is its other fields as a JSON object
    (ASCII), ``args_json`` each sample's arguments as JSON text (``chunks.encode_args``)."""
    worker.seq += 1
    line = f'{header[:-1]}, "id": {worker.seq}, "args_list": [{", ".join(args_json)}]}}\n'
    worker.send(line.encode())


def answer(worker: Worker, index: int | None, deadline: float) -> dict[str, Any]:
    """The next response line: to the last request, for sample ``index`` of a batch (None: not
    a batch). Raises as ``exchange`` does."""
    try:
        response = load_json(worker.read_line(deadline))
    except ValueError as exc:  # TooDeep included: the worker's own envelope is flat
        raise WorkerGone(f"the worker wrote a malformed response ({str(exc).split(':')[0]})") from None
    if not isinstance(response, dict) or response.get("id") != worker.seq or response.get("index") != index:
        raise WorkerGone("the worker answered out of turn")
    return response
