"""Results files: one JSON line per graded sample, each stamped with the suite's fingerprint.

The writer (``JsonlSink``) appends and fsyncs per chunk, so a crash loses at most the chunk
being written, and that only as a torn last line. The reader (``read_results``) is strict:
a torn last line is dropped, but a damaged line anywhere else, a line without an ``id`` or a
sample written twice is an error naming the line, never a silent truncation.

The fingerprint names the suite and grader set that produced a line (``suite_fingerprint``):
resuming a run into a file written by another suite is refused rather than reported as
"0/0 passed".
"""

from __future__ import annotations

import hashlib
import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import orjson
from pydantic import ValidationError

from assay.core.aggregate import SampleVerdict
from assay.core.errors import AssayError, SpecError
from assay.core.result import GraderResult, Status
from assay.core.untrusted import TooDeep, clean_json
from assay.runner.files import open_regular
from assay.runner.suites import Suite

FINGERPRINT_KEY = "fingerprint"
CONFIGS_KEY = "grader_fingerprints"
"""Each grader's own fingerprint (name -> hash of its type and config), so a comparison can
say which grader changed its configuration between two runs."""


def suite_fingerprint(suite: Suite) -> str:
    """A short hash of what decides a suite's verdicts: its name, graders (with their
    configs and weights, task-level ones included), threshold and cost ordering."""
    def specs(items: list) -> list[Any]:
        return [s.raw.model_dump(mode="json") | {"name": s.name, "weight": s.weight} for s in items]

    # The key stays "format" (the dialect's old name), so results files written before still resume.
    doc = {"name": suite.name, "format": suite.dialect, "threshold": suite.threshold,
           "cost_ordered": suite.cost_ordered, "graders": specs(suite.graders),
           "sample_graders": {k: specs(v) for k, v in sorted(suite.sample_graders.items())}}
    digest = hashlib.sha256(orjson.dumps(doc, option=orjson.OPT_SORT_KEYS, default=str)).hexdigest()
    return digest[:16]


def grader_fingerprints(suite: Suite) -> dict[str, str]:
    """A short hash per grader name of what decides its results: its type and config (for a
    task-level grader, every task's spec of that name). Weights are left out: they change the
    sample's verdict, not the grader's."""
    by_name: dict[str, list[Any]] = {}
    for task, items in [("", suite.graders), *sorted(suite.sample_graders.items())]:
        for s in items:
            spec = {k: v for k, v in s.raw.model_dump(mode="json").items() if k != "weight"}
            by_name.setdefault(s.name, []).append({"task": task, **spec})
    return {name: hashlib.sha256(orjson.dumps(specs, option=orjson.OPT_SORT_KEYS, default=str)).hexdigest()[:12]
            for name, specs in by_name.items()}


def verdict_line(verdict: SampleVerdict, fingerprint: str | None = None, codes: bool = False,
                 configs: dict[str, str] | None = None) -> bytes:
    """One results line (with each result's reason code and arguments when ``codes`` asks:
    lines for the service, never for a results file). Values a JSON writer refuses (lone
    surrogates, integers beyond 64 bits) are normalised here as a last resort, so a line is
    always written."""
    row = verdict.to_dict(codes)
    if fingerprint is not None:
        row[FINGERPRINT_KEY] = fingerprint
    if configs:
        row[CONFIGS_KEY] = configs
    try:
        return orjson.dumps(row) + b"\n"
    except (orjson.JSONEncodeError, TypeError):
        try:
            return orjson.dumps(clean_json(row)) + b"\n"
        except TooDeep:
            for r in row["results"]:
                r["details"] = {"dropped": "details nested too deeply to write"}
            return orjson.dumps(clean_json(row)) + b"\n"


class JsonlSink:
    """Appends verdicts as they finish; flushed and fsynced per chunk so a crash loses nothing
    that was reported done."""

    def __init__(self, path: Path, *, fingerprint: str | None = None, append: bool = False,
                 configs: dict[str, str] | None = None) -> None:
        self.path = path
        self.fingerprint = fingerprint
        self.configs = configs
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._fh: IO[bytes] = path.open("ab" if append else "wb")
            self._durable = stat.S_ISREG(os.fstat(self._fh.fileno()).st_mode)
        except OSError as exc:
            raise AssayError(f"cannot write results to {path}: {exc.strerror or exc}") from None

    def __call__(self, verdicts: list[SampleVerdict]) -> None:
        try:
            self._fh.write(b"".join(verdict_line(v, self.fingerprint, configs=self.configs) for v in verdicts))
            self._fh.flush()
            if self._durable:  # a regular file, not /dev/null or a pipe: make the chunk durable
                os.fsync(self._fh.fileno())
        except OSError as exc:
            raise AssayError(f"cannot write results to {self.path}: {exc.strerror or exc} "
                             "(the lines written before are kept; fix this and use --resume)") from None

    def close(self) -> None:
        try:
            self._fh.close()
        except OSError:
            pass  # a failed flush was reported by the write that failed


@dataclass(slots=True)
class ResultsLog:
    """What a results file holds: its verdicts in file order and the fingerprints seen."""

    path: Path
    verdicts: list[SampleVerdict] = field(default_factory=list)
    fingerprints: set[str | None] = field(default_factory=set)
    good_bytes: int = 0
    """Length of the file up to the end of its last complete line."""
    torn_line: int | None = None
    """Line number of a torn (unfinished) last line, if there is one."""

    def drop_torn_line(self) -> None:
        """Cut a torn last line off the file, so appended lines start on a line of their own."""
        if self.torn_line is not None:
            with self.path.open("r+b") as fh:
                fh.truncate(self.good_bytes)
            self.torn_line = None


def read_results(path: Path) -> ResultsLog:
    """Read a results file strictly; raises SpecError with ``file:line`` for a damaged line."""
    log = ResultsLog(path)
    seen: dict[str, int] = {}
    for n, verdict in iter_results(log):
        if verdict.id in seen:
            raise SpecError(f"sample {verdict.id!r} is written twice (first on line {seen[verdict.id]})",
                            where=f"{path}:{n}")
        seen[verdict.id] = n
        log.verdicts.append(verdict)
    return log


def iter_results(log: ResultsLog) -> Iterator[tuple[int, SampleVerdict]]:
    """``(line, verdict)`` for each line of ``log.path``, read a block at a time, filling in
    ``log``'s fingerprints, ``good_bytes`` and ``torn_line`` as it goes (``log.verdicts`` is
    left alone). A damaged line is a SpecError with ``file:line``; ids are not checked for
    repeats here (``read_results`` and ``runner.resume`` do it)."""
    for n, _, row in iter_rows(log):
        yield n, verdict_from_row(row, f"{log.path}:{n}")


def iter_rows(log: ResultsLog, keep: Callable[[int], bool] | None = None) -> Iterator[tuple[int, int, Any]]:
    """``(line, position, parsed row)`` for each sample line of ``log.path`` (position: its
    place among the samples, from 0), as ``iter_results`` reads them but not yet made
    verdicts; with ``keep``, only the positions it keeps are parsed (and checked) at all."""
    path = log.path
    position = -1
    seen = log.fingerprints
    with open_regular(path, what="results file") as fh:
        for n, line in enumerate(fh, 1):
            if line[:1] != b"{" and not line.strip():  # (a results line starts with "{": no copy to strip)
                log.good_bytes += len(line)
                continue
            if line[-1:] != b"\n":
                # A crash mid-write (only the last line can lack its newline): even a line that
                # parses lost its newline, so regrade it.
                log.torn_line = n
                return
            position += 1
            log.good_bytes += len(line)
            if keep is not None and not keep(position):
                continue
            try:
                row = orjson.loads(line)
            except orjson.JSONDecodeError as exc:
                raise SpecError(f"damaged line (not JSON: {exc}); was the file edited, or written by two runs "
                                "at once?", where=f"{path}:{n}") from None
            fingerprint = row.get(FINGERPRINT_KEY) if type(row) is dict else None
            if fingerprint is not None and type(fingerprint) is not str:
                raise SpecError(f"`{FINGERPRINT_KEY}` must be text, got {type(fingerprint).__name__}",
                                where=f"{path}:{n}")
            seen.add(fingerprint)
            yield n, position, row


def verdict_from_row(row: Any, where: str) -> SampleVerdict:
    """A verdict from one written row (``SampleVerdict.to_dict()``); SpecError at ``where``."""
    if not isinstance(row, dict):
        raise SpecError(f"a results line must be an object, got {type(row).__name__}", where=where)
    if not isinstance(row.get("id"), str) or not row["id"]:
        raise SpecError("a results line has no sample `id`", where=where)
    raw_results = row.get("results")
    if not isinstance(raw_results, list):
        raise SpecError(f"sample {row['id']!r}: `results` must be a list of grader results", where=where)
    try:
        results = [GraderResult.model_validate(r) for r in raw_results]
        status = Status(str(row.get("status")))  # not one of the values: ValueError, below
    except ValidationError as exc:
        raise SpecError.from_validation(exc, path="results", where=where) from None
    except ValueError:
        raise SpecError(f"sample {row['id']!r}: unknown status {row.get('status')!r}", where=where) from None
    skipped = row.get("skipped") or []
    if not isinstance(skipped, list) or not all(isinstance(s, str) for s in skipped):
        raise SpecError(f"sample {row['id']!r}: `skipped` must be a list of grader names", where=where)
    score = row.get("score")
    if score is not None and (isinstance(score, bool) or not isinstance(score, (int, float))):
        raise SpecError(f"sample {row['id']!r}: `score` must be a number or null", where=where)
    cluster = row.get("cluster")
    if cluster is not None and not isinstance(cluster, str):
        raise SpecError(f"sample {row['id']!r}: `cluster` must be text (the task id)", where=where)
    return SampleVerdict(row["id"], status, status is Status.PASSED, score, results, skipped, cluster)
