"""A run whose memory does not grow with its dataset: samples read as they are graded
(``DatasetStream``), and a resumed run's earlier results read back a block at a time
(``read_previous``), keeping 8 bytes per id (``runner.ids``).

The dataset is read twice. The first pass (``scan``) checks every row as loading a dataset
does (each row a valid sample, ids unique, something to grade), so a bad row is reported
before anything is graded or written, and counts the samples; the second pass feeds the run.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from assay.core.aggregate import SampleVerdict
from assay.core.errors import SpecError
from assay.core.sample import Sample
from assay.runner.dataset import check_outputs, duplicate_error, has_output, iter_dataset
from assay.runner.ids import IdHashes, IdIndex, first_duplicate
from assay.runner.results import ResultsLog, iter_results

CHUNK = 1000
"""Verdicts of a results file read back per call of ``read_previous``'s ``on_chunk``."""


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


@dataclass(slots=True)
class Previous:
    """What a resumed run keeps of the results file it appends to."""

    log: ResultsLog
    ids: IdIndex
    count: int


def read_previous(path: Path, fingerprint: str, on_chunk: Callable[[list[SampleVerdict]], None], *,
                  known: Callable[[list[str]], list[bool]] | None = None) -> Previous:
    """Read the results file at ``path`` a block at a time, handing its verdicts to ``on_chunk``
    in file order. Every line must carry ``fingerprint`` (written by this suite); ``known`` says
    which ids belong to the dataset: a line naming another one is a SpecError (resume only with
    the dataset that started the run), as is an id written twice."""
    log, hashes = ResultsLog(path), IdHashes()
    chunk: list[SampleVerdict] = []
    lines: list[int] = []

    def flush() -> None:
        check_fingerprints(log, fingerprint)
        if known is not None:
            for line, verdict, ok in zip(lines, chunk, known([v.id for v in chunk])):
                if not ok:
                    raise SpecError(f"{path} holds sample {verdict.id!r} that this suite's dataset does not have; "
                                    "resume only with the dataset that started the run", where=f"{path}:{line}")
        on_chunk(chunk)
        chunk.clear()
        lines.clear()

    for line, verdict in iter_results(log):
        hashes.add(verdict.id)
        chunk.append(verdict)
        lines.append(line)
        if len(chunk) >= CHUNK:
            flush()
    flush()
    repeated = first_duplicate(lambda: ((n, v.id) for n, v in iter_results(ResultsLog(path))), hashes)
    if repeated is not None:
        sample_id, first_line, line = repeated
        raise SpecError(f"sample {sample_id!r} is written twice (first on line {first_line})", where=f"{path}:{line}")
    return Previous(log, hashes.index(), len(hashes))


def check_fingerprints(log: ResultsLog, fingerprint: str) -> None:
    """SpecError when a line of ``log`` was written by another suite (or an older assay)."""
    others = log.fingerprints - {fingerprint}
    if others:
        written = "without a fingerprint (an older assay)" if others == {None} else \
            f"by another suite or grader set (fingerprint {sorted(map(str, others))[0]})"
        raise SpecError(f"{log.path} was written {written}, not by this suite (fingerprint {fingerprint}); "
                        "write to another --out, or run without --resume to start again")
