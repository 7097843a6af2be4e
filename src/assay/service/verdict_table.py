"""A run's verdict table: each sample's verdict and each evaluator's status and score on it, as
``run_summary.run_verdicts`` judged them, kept in ``run_verdicts`` (``store.verdicts``) so that
a comparison reads two tables of columns instead of every result of two runs.

Written while the run's summary is made when it completes (the verdicts stream through
``Writer.through`` on their way to the summary: the results are read once), in that same
transaction; a run finished before the table existed gets it at its first comparison. Each
part is bytes: ``MAGIC``, the length of a JSON header (its sample ids, its evaluators; the last
part adds the run's evaluator order and names, the weights the verdicts were judged with, and
the results counted per status), the header, then the columns (int8 statuses, float64 scores;
NaN: none), the verdicts' first and each evaluator's after.
"""

from __future__ import annotations

import json
import math
import struct
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from assay.core.aggregate import SampleVerdict
from assay.core.compare_columns import ABSENT, CODES, VerdictColumns
from assay.core.errors import AssayError
from assay.store import verdicts

MAGIC = b"AVT1"
_LENGTH = struct.Struct("<I")
_SCORE = np.dtype("<f8")
Emit = Callable[[int, bytes, bool], None]
"""``(samples, body, final)``: where a part goes once made."""


@dataclass(slots=True)
class Table:
    """A run's verdict table as read back: its columns and what it was judged and counted with."""

    columns: VerdictColumns
    names: dict[str, str]
    weights: dict[str, float]
    counts: dict[str, int]
    single: bool
    """Every result stands alone on its (sample, evaluator): what ``compare_columns`` needs."""


class Writer:
    """Makes a run's table from its verdicts as they stream by, part by part (a part's samples
    are held, never the run's), handing each part to ``emit``."""

    def __init__(self, weights: dict[str, float], names: dict[str, str], emit: Emit) -> None:
        self.weights, self.names, self.emit = weights, names, emit
        self.part_samples = verdicts.PART_SAMPLES
        self.order: dict[str, None] = {}
        self.counts: Counter[str] = Counter()
        self.single = True
        self._start()

    def _start(self) -> None:
        self.ids: list[str] = []
        self.status: list[int] = []
        self.score: list[float] = []
        self.cells: dict[str, tuple[list[int], list[int], list[float]]] = {}

    def through(self, verdicts: Iterator[SampleVerdict]) -> Iterator[SampleVerdict]:
        """``verdicts`` unchanged, each one kept on its way; the last part is made once they
        are all read (a stream left unfinished makes no final part: no table)."""
        for v in verdicts:
            self.add(v)
            yield v
        self.finish()

    def add(self, v: SampleVerdict) -> None:
        at = len(self.ids)
        self.ids.append(v.id)
        self.status.append(CODES[v.status])
        self.score.append(math.nan if v.score is None else v.score)
        for r in v.results:
            self.counts[str(r.status)] += 1  # as stored (a Status is its text)
            self.order.setdefault(r.name)
            where, codes, scores = self.cells.setdefault(r.name, ([], [], []))
            if where and where[-1] == at:
                self.single = False  # one evaluator twice on one sample (no store allows it)
            where.append(at)
            codes.append(CODES[r.status])
            scores.append(math.nan if r.score is None else r.score)
        if v.cluster is not None:
            self.single = False
        if len(self.ids) >= self.part_samples:
            self._emit(final=False)

    def finish(self) -> None:
        self._emit(final=True)

    def _emit(self, *, final: bool) -> None:
        n, graders = len(self.ids), list(self.cells)
        status = np.full((len(graders), n), ABSENT, dtype=np.int8)
        score = np.full((len(graders), n), np.nan, dtype=_SCORE)
        for row, (where, codes, scores) in enumerate(self.cells.values()):
            status[row, where] = codes
            score[row, where] = scores
        header: dict[str, Any] = {"ids": self.ids, "graders": graders}
        if final:
            header.update(order=list(self.order), names={g: self.names.get(g, g) for g in self.order},
                          weights=self.weights, counts=dict(self.counts), single=self.single)
        text = json.dumps(header, separators=(",", ":")).encode()  # ASCII: any id's code points survive
        body = b"".join((MAGIC, _LENGTH.pack(len(text)), text, np.array(self.status, dtype=np.int8).tobytes(),
                         np.array(self.score, dtype=_SCORE).tobytes(), status.tobytes(), score.tobytes()))
        self.emit(n, body, final)
        self._start()


class Unreadable(AssayError, ValueError):
    """Bytes that are not a part this module wrote."""


def read(bodies: Sequence[bytes]) -> Table:
    """A run's table from its parts, in order (raises ``Unreadable`` on bytes it did not write)."""
    parts = [_part(body) for body in bodies]
    last = parts[-1][0]
    try:
        order, names, weights, counts = list(last["order"]), dict(last["names"]), dict(last["weights"]), \
            dict(last["counts"])
        single = bool(last["single"])
    except (KeyError, TypeError, ValueError) as exc:
        raise Unreadable("the last part lacks the run's header") from exc
    rows = {g: i for i, g in enumerate(order)}
    total = sum(len(header["ids"]) for header, *_ in parts)
    ids: list[str] = []
    g_status = np.full((len(order), total), ABSENT, dtype=np.int8)
    g_score = np.full((len(order), total), np.nan, dtype=_SCORE)
    for header, _, _, status, score in parts:
        start = len(ids)
        ids.extend(header["ids"])
        for k, grader in enumerate(header["graders"]):
            if grader not in rows:
                raise Unreadable(f"part names evaluator {grader!r} that the run's order lacks")
            g_status[rows[grader], start:len(ids)] = status[k]
            g_score[rows[grader], start:len(ids)] = score[k]
    columns = VerdictColumns(ids, np.concatenate([p[1] for p in parts]), np.concatenate([p[2] for p in parts]), order,
                      g_status, g_score)
    return Table(columns, names, weights, counts, single)


def _part(body: bytes) -> tuple[dict[str, Any], np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    if body[:4] != MAGIC or len(body) < 8:
        raise Unreadable("not a verdict part")
    (size,) = _LENGTH.unpack_from(body, 4)
    try:
        header = json.loads(body[8:8 + size])
        ids, graders = header["ids"], header["graders"]
    except (ValueError, KeyError, TypeError) as exc:
        raise Unreadable("a verdict part's header is not its JSON") from exc
    if not isinstance(ids, list) or not isinstance(graders, list) or not all(isinstance(i, str) for i in ids):
        raise Unreadable("a verdict part's header is not its JSON")
    n, g, at = len(ids), len(graders), 8 + size
    if len(body) != at + n * 9 + g * n * 9:
        raise Unreadable("a verdict part's columns are not as long as its samples")
    status = np.frombuffer(body, dtype=np.int8, count=n, offset=at)
    score = np.frombuffer(body, dtype=_SCORE, count=n, offset=at + n)
    g_status = np.frombuffer(body, dtype=np.int8, count=g * n, offset=at + 9 * n).reshape(g, n)
    g_score = np.frombuffer(body, dtype=_SCORE, count=g * n, offset=at + 9 * n + g * n).reshape(g, n)
    return header, status, score, g_status, g_score
