"""How many go together and how many run at once, decided in one place: the local engine's
chunks, the Ray engine's rows per task, the service's slices of a run, the batches that follow
the measured speed of the work (``Pacer``), and the sandbox's workers (``local_sandbox_workers``,
``code_slots``).

The rule reads the graders' traits (``CompiledSpec.traits``, so a composite answers for its
children): pure graders take large batches (vectorised, cheap per row); graders that wait on
I/O take small ones so progress and the results file advance steadily, except that graders
which spread a batch over their own I/O (the sandbox's batched path) may grow them.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass

from assay.core.spec import CompiledSpec

PURE_CHUNK = 1000
"""Samples per local chunk (and service slice) when no grader waits on I/O."""
CODE_CHUNK = 512
"""The largest local chunk when code graders are the only ones waiting on I/O: two sandbox
chunks of 256 (one per core on a 2-core machine)."""
PURE_BATCH_ROWS = 4096
"""Rows per Ray task when every grader is pure: large enough that Ray's per-task cost vanishes."""
CODE_BATCH_ROWS = 2048
"""Rows per Ray task when code graders are the only ones waiting: the sandbox grades thousands
a second in its own batches, and fewer, larger tasks keep Ray's own cost per row small."""
IO_BATCH_ROWS = 256
"""Rows per Ray task when a program or LLM grader is involved: the worker's thread pool keeps
its evaluations in flight, and the results file still advances steadily."""


@dataclass(frozen=True, slots=True)
class BatchSizes:
    """The sizes for one set of graders."""

    first: int
    """Samples in the first local chunk, and in each slice of a service run."""
    largest: int | None
    """How large local chunks may grow while they are graded quickly (None: they stay ``first``)."""
    ray_rows: int
    """Rows per Ray task."""


def batch_sizes(specs: Iterable[CompiledSpec], concurrency: int = 8) -> BatchSizes:
    """The sizes for grading with ``specs`` (a suite's graders, each sample's own included)
    when ``concurrency`` evaluations may wait at once."""
    traits = [spec.traits for spec in specs]
    waiting = [t for t in traits if t.io_bound]
    judges = any(t.judge for t in traits)
    if not waiting:
        return BatchSizes(PURE_CHUNK, None, IO_BATCH_ROWS if judges else PURE_BATCH_ROWS)
    first = max(16, concurrency * 4)
    if all(t.batches_io for t in waiting):
        return BatchSizes(first, CODE_CHUNK, IO_BATCH_ROWS if judges else CODE_BATCH_ROWS)
    return BatchSizes(first, None, IO_BATCH_ROWS)


SHARED_WORKERS_PER_CORE = 4
"""A server's sandbox workers per core: more than the cores, so that code sleeping or blocked
(which uses no CPU) does not keep a worker from others (``sandbox.priority`` lowers code that
runs long)."""


def cores() -> int:
    """This machine's CPU cores: what a local sandbox, a local Ray and CPU-bound batches are sized in."""
    return os.cpu_count() or 1


def local_sandbox_workers(requested: int = 0, *, shared: bool = False) -> int:
    """Workers per language of a sandbox on this machine: ``requested`` (``ASSAY_SANDBOX_WORKERS``,
    ``--workers``), else one per core, or ``SHARED_WORKERS_PER_CORE`` per core for the sandbox of
    a server, shared by its users."""
    return requested or (SHARED_WORKERS_PER_CORE if shared else 1) * cores()


def code_slots(runner: object, requested: int = 0) -> int:
    """How many code evaluations the sandbox behind ``runner`` runs at once: its ``workers`` per
    language, when it owns pools; else (a sandbox service elsewhere, whose pools are not here)
    ``requested``, that service's ``--workers``, or one per core, its default."""
    workers = getattr(runner, "workers", None)
    return workers if isinstance(workers, int) and workers > 0 else local_sandbox_workers(requested)


class Pacer:
    """The size of the next batch: about ``budget_s`` of work at the speed measured so far,
    between ``smallest`` and ``largest``, starting at ``first``.

    Used wherever a batch is the unit someone waits for: the local engine's chunks (the results
    file advances every second or so), a piece of a sandbox batch holding its workers while
    another user waits (``server.fairness``), the results of a slice committed together while a
    user watches (``server.slices``). Sizes grow at most fourfold a step while the work stays fast."""

    def __init__(self, budget_s: float, first: int, largest: int, smallest: int = 1) -> None:
        self.budget_s = budget_s
        self.smallest = max(1, smallest)
        self.largest = max(self.smallest, largest)
        self.size = max(self.smallest, min(first, self.largest))

    def observe(self, count: int, seconds: float) -> None:
        """``count`` items took ``seconds``: the next size fits the budget at that speed (at most
        four times the batch measured: one fast batch does not prove the next will be; a short one,
        such as the last of a list, proves nothing beyond the size it had)."""
        if count <= 0:
            return
        per_item = seconds / count
        fits = int(self.budget_s / per_item) if per_item > 0 else self.largest
        self.size = max(self.smallest, min(self.largest, fits, max(self.size, 4 * count)))
