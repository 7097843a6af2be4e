"""Two runs kept in files compared pair by pair, in memory that does not grow with them.

Each run is read once into columns (``tallies``) and summed per sample; the two are joined
on the samples' keys with numpy, and each grader's figures come from
``core.compare.paired_figures``, as for runs held in memory (``compare_runs``), so both give
the same numbers. The samples a comparison lists (those that flipped, those in one run only)
are then read again, only they, and their ids and reasons kept in a SQLite file in a temporary
directory; the comparison's lists are read back from it as they are printed
(``LazyList``), so even a million flips are never held at once.
"""

from __future__ import annotations

import sqlite3
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, overload

import numpy as np

from assay.core.compare import (
    OVERALL,
    Comparison,
    GraderComparison,
    paired_figures,
    present,
)
from assay.runner.comparing.readers import format_of
from assay.runner.comparing.tallies import RunTallies, read_run

KEY = ""
"""The stored text that is the sample's key (its cluster, else its id), beside its graders' reasons."""
CHUNK = 1000


class LazyList(Sequence[Any]):
    """A list read back ``CHUNK`` items at a time (``fetch(start, stop)``), never held whole."""

    def __init__(self, length: int, fetch: Callable[[int, int], list[Any]]) -> None:
        self._length, self._fetch = length, fetch

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, index: int) -> Any: ...
    @overload
    def __getitem__(self, index: slice) -> list[Any]: ...
    def __getitem__(self, index: int | slice) -> Any:
        if isinstance(index, slice):
            start, stop, step = index.indices(self._length)
            return self._fetch(start, stop)[::step] if stop > start else []
        if not -self._length <= index < self._length:
            raise IndexError(index)
        index %= self._length
        return self._fetch(index, index + 1)[0]

    def __iter__(self) -> Iterator[Any]:
        for start in range(0, self._length, CHUNK):
            yield from self._fetch(start, min(self._length, start + CHUNK))


def chained(first: LazyList, second: LazyList) -> LazyList:
    """``first`` then ``second``, as one list."""
    def fetch(start: int, stop: int) -> list[Any]:
        cut = len(first)
        return first[start:min(stop, cut)] + second[max(0, start - cut):max(0, stop - cut)]

    return LazyList(len(first) + len(second), fetch)


class _Store:
    """Ids and reasons of the listed samples, by (run, position, grader); ``KEY`` for the id."""

    def __init__(self, path: Path) -> None:
        self._db = sqlite3.connect(path)
        self._db.execute("CREATE TABLE said (run INTEGER, pos INTEGER, grader TEXT, text TEXT, "
                         "PRIMARY KEY (run, pos, grader)) WITHOUT ROWID")

    def keep(self, run: int, wanted: np.ndarray, read: RunTallies) -> None:
        """Read again the samples of ``read`` at ``wanted`` positions and keep their texts."""
        mask = np.zeros(read.samples, dtype=bool)
        mask[wanted[wanted >= 0]] = True
        rows: list[tuple[int, int, str, str]] = []
        for said in read.fmt.texts_at(read.path, _Mask(mask)):
            rows.append((run, said.position, KEY, said.key))
            rows.extend((run, said.position, name, text) for name, text in said.reasons.items())
            if len(rows) >= 10 * CHUNK:
                self._db.executemany("INSERT OR IGNORE INTO said VALUES (?, ?, ?, ?)", rows)
                rows.clear()
        self._db.executemany("INSERT OR IGNORE INTO said VALUES (?, ?, ?, ?)", rows)

    def texts(self, run: int, positions: np.ndarray, grader: str) -> list[str | None]:
        wanted = [int(p) for p in positions if p >= 0]
        found: dict[int, str] = {}
        if wanted:
            marks = ",".join("?" * len(wanted))
            found = dict(self._db.execute(f"SELECT pos, text FROM said WHERE run = ? AND grader = ? AND pos IN "
                                          f"({marks})", [run, grader, *wanted]).fetchall())
        return [found.get(int(p)) if p >= 0 else None for p in positions]

    def close(self) -> None:
        self._db.close()


class _Mask:
    """Positions as a boolean column (``in``: one lookup, however many are wanted)."""

    def __init__(self, mask: np.ndarray) -> None:
        self._mask = mask

    def __contains__(self, position: object) -> bool:
        return isinstance(position, int) and 0 <= position < len(self._mask) and bool(self._mask[position])


@contextmanager
def compare_files(base: Path, new: Path, *, adjust: str = "holm", alpha: float = 0.05) -> Iterator[dict[str, Any]]:
    """The comparison of the runs in ``base`` and ``new``, as ``Comparison.to_dict()`` shapes it
    (its lists ``LazyList``s, readable until the context ends)."""
    b, n = read_run(base, format_of(base)), read_run(new, format_of(new))
    _, ib, jn = np.intersect1d(b.keys, n.keys, assume_unique=True, return_indices=True)
    order = np.argsort(b.first[ib], kind="stable")
    ib, jn = ib[order], jn[order]
    names = b.graders[1:] + [g for g in n.graders[1:] if g not in b.tallies]
    graders, flipped = [], {}
    for name in [*names, OVERALL]:
        g, flipped[name] = _grader(name, b, n, ib, jn)
        graders.append(g)
    base_only, new_only = _unpaired(b, ib), _unpaired(n, jn)
    comparison = Comparison(graders[:-1], graders[-1], [], []).finish(adjust, alpha)
    with tempfile.TemporaryDirectory(prefix="assay-compare-") as tmp:
        texts = _Store(Path(tmp) / "said.sqlite")
        try:
            for run, read, own in ((0, b, base_only), (1, n, new_only)):
                wanted = [read.first[own]]
                for name, cut in flipped.items():
                    if cut is not None and name in read.tallies:
                        wanted.append(read.tallies[name].reason_at[np.concatenate([cut[run], cut[run + 2]])])
                        if run == 0:
                            wanted.append(read.first[np.concatenate([cut[0], cut[2]])])
                texts.keep(run, np.concatenate(wanted), read)
            doc = comparison.to_dict()
            doc["unpaired"] = {"base_only": _ids(texts, 0, b.first[base_only]),
                               "new_only": _ids(texts, 1, n.first[new_only])}
            for g in [*doc["graders"], doc["overall"]]:
                cut = flipped[g["grader"]]
                if cut is not None:
                    _flips(g, texts, b, n, cut)
            yield doc
        finally:
            texts.close()


def _grader(name: str, b: RunTallies, n: RunTallies, ib: np.ndarray, jn: np.ndarray) -> tuple[GraderComparison, Any]:
    x, y = b.tallies.get(name), n.tallies.get(name)
    out = GraderComparison(name, 0, None, None, None, None, None, left_out=len(ib),
                           present=present(x is not None, y is not None))
    before, after = b.configs.get(name), n.configs.get(name)
    out.config_changed = bool(before and after and before != after)
    if x is None or y is None:
        return out, None
    ok = (x.attempts[ib] > 0) & (y.attempts[jn] > 0)
    out.left_out = int(len(ib) - ok.sum())
    if not ok.any():
        return out, None
    bi, nj = ib[ok], jn[ok]
    xr, yr = x.passes[bi] / x.attempts[bi], y.passes[nj] / y.attempts[nj]
    single = bool(((x.attempts[bi] == 1) & (y.attempts[nj] == 1)).all())
    with np.errstate(invalid="ignore", divide="ignore"):
        sx = np.where(x.scores[bi] > 0, x.score_sum[bi] / x.scores[bi], np.nan)
        sy = np.where(y.scores[nj] > 0, y.score_sum[nj] / y.scores[nj], np.nan)
    d = paired_figures(out, xr, yr, single, sx, sy)
    return out, (bi[d < 0], nj[d < 0], bi[d > 0], nj[d > 0])


def _unpaired(run: RunTallies, paired: np.ndarray) -> np.ndarray:
    """The run's clusters the other lacks, in the order the run first shows them."""
    alone = np.ones(len(run.keys), dtype=bool)
    alone[paired] = False
    at = np.nonzero(alone)[0]
    return at[np.argsort(run.first[at], kind="stable")]


def _ids(texts: _Store, run: int, positions: np.ndarray) -> LazyList:
    return LazyList(len(positions), lambda i, j: texts.texts(run, positions[i:j], KEY))


def _flips(g: dict[str, Any], texts: _Store, b: RunTallies, n: RunTallies, cut: Any) -> None:
    x, y = b.tallies[g["grader"]], n.tallies[g["grader"]]
    lists = []
    for way, bi, nj in (("to_fail", cut[0], cut[1]), ("to_pass", cut[2], cut[3])):
        g[way] = _ids(texts, 0, b.first[bi])

        def fetch(i: int, j: int, way: str = way, bi: np.ndarray = bi, nj: np.ndarray = nj) -> list[Any]:
            ids = texts.texts(0, b.first[bi[i:j]], KEY)
            before = texts.texts(0, x.reason_at[bi[i:j]], g["grader"])
            after = texts.texts(1, y.reason_at[nj[i:j]], g["grader"])
            return [{"id": k, "direction": way, "base_reason": r0, "new_reason": r1}
                    for k, r0, r1 in zip(ids, before, after)]

        lists.append(LazyList(len(bi), fetch))
    g["flips"] = chained(lists[0], lists[1])
