"""A batch's chunks on the pool's workers: one ``batch`` request per chunk, one answer per sample.

A chunk goes to a worker as one request (``worker.js``); the worker runs its samples in turn,
each in a compartment of its own under the batch's limits, and writes each sample's answer as soon as
it has it. Each answer must come within the sample's ``timeout_ms`` plus the pool's margin of
the previous one. When it does not, or the worker dies or answers out of protocol, that sample
gets the timeout or error a single call gets, the worker is killed, and the rest of the chunk
goes to a fresh worker: every round settles at least one sample, so a chunk always ends.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from assay.core.interfaces import CodeBatch, CodeOutcome
from assay.core.messages import Phrase
from assay.core.result import ErrorCode
from assay.sandbox.chunks import encode_args
from assay.sandbox.node.handle import Worker, WorkerGone
from assay.sandbox.node.outcome import classify, overran
from assay.sandbox.node.session import answer, send_batch
from assay.sandbox.priority import demote, restore

if TYPE_CHECKING:
    from assay.sandbox.node.pool import NodePool

WORKER_FAILED = Phrase("sandbox.node.worker_failed", "the Node worker failed: {error}")

Item = tuple[int, str]
"""A sample: its position in the batch and its arguments as JSON text."""


def encode(args: Any) -> str:
    """One sample's arguments as JSON text (``chunks.encode_args``: NaN as null, as in Python);
    raises ``TypeError`` when they are not JSON data."""
    return encode_args(args).decode("utf-8")


@dataclass(slots=True)
class _Lowering:
    """When a round's worker gets a lower CPU priority (``sandbox.priority``): ``group`` is its
    process group (its own session), ``at`` the time (None: not, or no more), ``done`` once it is."""

    group: int
    at: float | None
    done: bool = False


class ChunkRunner:
    """Runs the chunks of one batch on ``pool``'s workers (each chunk from one thread)."""

    def __init__(self, pool: NodePool, batch: CodeBatch) -> None:
        self.pool = pool
        self.timeout_ms = batch.timeout_ms
        self.memory_mb = batch.memory_mb
        self.header = json.dumps({"op": "batch", "source": batch.source, "function": batch.function,
                                  "timeout_ms": batch.timeout_ms, "memory_mb": batch.memory_mb}, allow_nan=False)

    def limits(self, layers: list[str]) -> dict[str, Any]:
        return {"timeout_ms": self.timeout_ms, "memory_mb": self.memory_mb, "layers": layers}

    def run(self, chunk: list[Item]) -> list[CodeOutcome]:
        """One outcome per sample of ``chunk``, in order."""
        got: list[CodeOutcome] = []
        while len(got) < len(chunk):
            got += self._round(chunk[len(got):])
        return got

    def _round(self, items: list[Item]) -> list[CodeOutcome]:
        """Outcomes for the first samples of ``items`` on one worker (at least one)."""
        pool = self.pool
        worker = pool._acquire()
        if isinstance(worker, str):
            return [CodeOutcome(error=ErrorCode.UNAVAILABLE, message=worker, limits=self.limits([])) for _ in items]
        # A worker answers max_calls samples in all, then it is replaced.
        items = items[:max(1, pool.max_calls - worker.calls)]
        timeout_s = self.timeout_ms / 1000
        got: list[CodeOutcome] = []
        keep = False
        start = time.monotonic()
        after = pool.demote_after_s
        lowered = _Lowering(worker.proc.pid, None if after is None else start + after)
        try:
            send_batch(worker, self.header, [args for _i, args in items])
            for k in range(len(items)):
                response, alive = self._answer(worker, k, start + timeout_s + pool.margin_s, lowered)
                now = time.monotonic()
                got.append(classify(response, (now - start) * 1000, self.limits(worker.layers)))
                start = now
                if not alive:
                    break
                worker.calls += 1
            else:
                keep = worker.calls < pool.max_calls
        except WorkerGone as exc:  # the request could not be sent: the first sample gets the error
            got.append(classify({"status": "error", "message": WORKER_FAILED(error=str(exc))},
                                (time.monotonic() - start) * 1000, self.limits(worker.layers)))
        finally:
            if lowered.done and keep:
                keep = restore(lowered.group)  # it serves others next: at their priority, or not at all
            pool._release(worker, keep)
        return got

    def _answer(self, worker: Worker, index: int, deadline: float, lowered: _Lowering) -> tuple[dict[str, Any], bool]:
        """Sample ``index``'s response, and whether the worker may go on; a timeout or a broken
        worker becomes the sample's response (as for a single call) and ends the worker's round."""
        try:
            if lowered.at is not None and lowered.at < deadline:
                try:  # the answer within the pool's demote_after_s, or the worker's CPU priority lowered
                    return answer(worker, index, lowered.at), True
                except TimeoutError:
                    demote(lowered.group)
                    lowered.at, lowered.done = None, True
            return answer(worker, index, deadline), True
        except TimeoutError:
            return {"status": "timeout", "message": overran(self.timeout_ms, worker)}, False
        except WorkerGone as exc:
            return {"status": "error", "message": WORKER_FAILED(error=str(exc))}, False
