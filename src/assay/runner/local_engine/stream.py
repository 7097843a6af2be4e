"""A run whose memory does not grow with its dataset: samples read as they are graded
(``DatasetStream``), keeping 8 bytes per id (``runner.ids``); a resumed run's earlier results
are read back a block at a time by ``runner.resume``.

The dataset is read twice. The first pass (``scan``) checks every row as loading a dataset
does (each row a valid sample, ids unique, something to grade), so a bad row is reported
before anything is graded or written, and counts the samples; the second pass feeds the run.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from assay.core.errors import SpecError
from assay.core.sample import Sample
from assay.runner.dataset import check_outputs, duplicate_error, has_output, iter_dataset
from assay.runner.ids import IdHashes, IdIndex, first_duplicate


@dataclass(slots=True)
class DatasetStream:
    """The samples of a dataset file, read as they are used (see the module's docstring)."""

    path: Path
    delimiter: str | None = None
    count: int = 0
    """Samples in the file, once ``scan`` has run."""
    ids: IdIndex = field(default_factory=IdIndex)
    """The samples' ids, once ``scan`` has run."""

    def scan(self) -> None:
        """Check every row (SpecError naming ``file:line``: a bad row, a repeated id, no row with
        an output); count them and index their ids."""
        hashes, first = IdHashes(), list[Sample]()
        graded = False
        for _, sample in iter_dataset(self.path, delimiter=self.delimiter):
            hashes.add(sample.id)
            graded = graded or has_output(sample)
            if not graded and len(first) < 100:
                first.append(sample)
        if not hashes:
            raise SpecError("no samples to grade (the dataset is empty)", where=str(self.path))
        if not graded:
            check_outputs(first, str(self.path))
        repeated = first_duplicate(self._numbered_ids, hashes)
        if repeated is not None:
            sample_id, first_line, line = repeated
            raise duplicate_error(sample_id, first_line, f"{self.path}:{line}")
        self.count, self.ids = len(hashes), hashes.index()

    def __iter__(self) -> Iterator[Sample]:
        return (sample for _, sample in iter_dataset(self.path, delimiter=self.delimiter))

    def _numbered_ids(self) -> Iterator[tuple[int, str]]:
        return ((line, s.id) for line, s in iter_dataset(self.path, delimiter=self.delimiter))
