"""A resumed run's earlier results, read back a block at a time (``read_previous``), keeping
8 bytes per id (``runner.ids``), and checked to be this suite's (``check_fingerprints``): both
engines resume through it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from assay.core.aggregate import SampleVerdict
from assay.core.errors import SpecError
from assay.runner.ids import IdHashes, IdIndex, first_duplicate
from assay.runner.results import ResultsLog, iter_results

CHUNK = 1000
"""Verdicts of a results file read back per call of ``read_previous``'s ``on_chunk``."""


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
