"""Concurrent ``/test`` requests of one caller for one code evaluator, graded as sandbox batches.

A code evaluator tested one request at a time pays a confined process per request. When the
same caller tests the same evaluator many times at once (a CI job, a notebook loop, a load
test), the requests that arrive while earlier ones are in the sandbox are graded together as
one batch: one process for them all, each sample still under the evaluator's own limits and in
a fresh module. No request waits for company: the first goes at once, and a batch is only what
queued meanwhile. Requests of different callers are never batched together (a chunk shares one
process, so an evaluator's code could carry one caller's input over to another's answer).

Everything here runs on the event loop; the grading itself runs in the threadpool (anyio's, which
the routes' ``run_in_threadpool`` shares).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from functools import partial
from typing import Any

import anyio.to_thread

from assay.core.grader import Grader
from assay.core.result import GraderResult
from assay.core.sample import Sample
from assay.runner.execute import grade_many
from assay.service.fairness import as_user

MAX_BATCH = 64
"""Requests graded in one batch at most."""


@dataclass(slots=True)
class _Lane:
    grader: Grader[Any]
    waiting: list[tuple[Sample, asyncio.Future[GraderResult]]] = field(default_factory=list)
    running: int = 0


class Coalescer:
    """Grades requests for one ``(caller, grader)`` lane in batches, ``lanes`` batches at once
    (the sandbox's workers: more would only queue there)."""

    def __init__(self, lanes: int) -> None:
        self.lanes = max(1, lanes)
        self._lanes: dict[tuple[str, int], _Lane] = {}

    async def grade(self, caller: str, grader: Grader[Any], sample: Sample) -> GraderResult:
        key = (caller, id(grader))
        lane = self._lanes.get(key)
        if lane is None:
            lane = self._lanes[key] = _Lane(grader)
        future: asyncio.Future[GraderResult] = asyncio.get_running_loop().create_future()
        lane.waiting.append((sample, future))
        if lane.running < self.lanes:
            lane.running += 1
            asyncio.get_running_loop().create_task(self._drain(key, lane))
        return await future

    async def _drain(self, key: tuple[str, int], lane: _Lane) -> None:
        try:
            while lane.waiting:
                batch, lane.waiting = lane.waiting[:MAX_BATCH], lane.waiting[MAX_BATCH:]
                try:
                    graded = partial(as_user, key[0], grade_many, lane.grader, [s for s, _ in batch])
                    results = await anyio.to_thread.run_sync(graded)
                except Exception as exc:  # noqa: BLE001 - grade_many does not raise; if it did, every caller hears
                    for _, future in batch:
                        if not future.done():
                            future.set_exception(exc)
                    continue
                for (_, future), result in zip(batch, results, strict=True):
                    if not future.done():  # the client may have gone
                        future.set_result(result)
        finally:
            lane.running -= 1
            if not lane.running and not lane.waiting and self._lanes.get(key) is lane:
                del self._lanes[key]
