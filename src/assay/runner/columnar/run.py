"""``assay run`` on the columnar path: a chunk of samples becomes two Arrow text columns, each
grader grades them as a kernel, and the verdicts are the ones the object path writes (same
results lines, details included; only ``latency_ms`` is measured differently: a grader's time
over the chunk shared equally among its rows, as the object path shares a batch's).
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np
import pyarrow as pa

from assay.core.aggregate import SampleVerdict, judge_columns
from assay.core.grader import Grader
from assay.core.sample import Sample
from assay.core.spec import CompiledSpec
from assay.runner.columnar._dispatch import timed_columns
from assay.runner.columnar._frame import Frame
from assay.runner.suites import Suite


def grade_chunk(suite: Suite, chunk: list[Sample], grader_for: Callable[[CompiledSpec], Grader],
                pool: ThreadPoolExecutor | None = None) -> list[SampleVerdict]:
    """Verdicts for ``chunk`` in order, as ``runner.local_engine.run`` grades a chunk on the object path."""
    frame = SampleFrame(chunk)
    per_grader = []
    for spec in suite.graders:
        grader = grader_for(spec)
        cols, latency = timed_columns(grader, frame, with_details=True, workers=0, pool=pool)
        per_grader.append(cols.results(grader, latency))
    return judge_columns((s.id for s in chunk), per_grader, threshold=suite.threshold)


class SampleFrame(Frame):
    """A ``Frame`` over loaded samples: text outputs and expected values as Arrow columns, the
    rest (numbers, objects) marked opaque, for the object path."""

    def __init__(self, samples: list[Sample]) -> None:
        self._samples = samples
        columns, opaque = {}, np.zeros(len(samples), dtype=bool)
        for name in ("output", "expected"):
            values = [getattr(s, name) for s in samples]
            other = np.fromiter((v is not None and v.__class__ is not str for v in values), dtype=bool,
                                count=len(values))
            if other.any():
                opaque |= other
                values = [None if o else v for v, o in zip(values, other.tolist())]
            try:
                columns[name] = pa.array(values, pa.large_string())
            except (pa.ArrowException, UnicodeEncodeError):  # text UTF-8 cannot hold (lone surrogates)
                columns[name] = pa.nulls(len(values), pa.large_string())
                opaque[:] = True
        super().__init__(pa.table(columns))
        self.opaque = opaque if opaque.any() else None

    def values(self, name: str, rows: np.ndarray) -> list[Any]:
        return [getattr(self._samples[i], name) for i in rows.tolist()]

    def samples(self, rows: np.ndarray) -> list[Sample]:
        return [self._samples[i] for i in rows.tolist()]
