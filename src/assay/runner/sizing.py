"""How many samples go together, decided in one place for every engine: the local engine's
chunks, the Ray engine's rows per task, and the service's slices of a run.

The rule reads the graders' traits (``CompiledSpec.traits``, so a composite answers for its
children): pure graders take large batches (vectorised, cheap per row); graders that wait on
I/O take small ones so progress and the results file advance steadily, except that graders
which spread a batch over their own I/O (the sandbox's batched path) may grow them.
"""

from __future__ import annotations

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
