"""A run read once, kept as columns: what each grader decided on each sample, a few bytes a
result, then summed per sample (per cluster: a task graded several times) with numpy.

Samples are keyed by the 64-bit hash of their cluster (``runner.ids``), checked by a CRC-32
of the text, so two keys are taken as one only when both agree (about one chance in 10^19 for
two runs of a million samples each; a clash of the hash alone is caught and reported). The
text itself is read again only for the samples a comparison lists (``files``).
"""

from __future__ import annotations

import zlib
from array import array
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from assay.core.compare import OVERALL
from assay.core.errors import AssayError, SpecError
from assay.runner.comparing.readers import LEFT_OUT, PASSED, REASONED, RunFormat
from assay.runner.ids import IdHashes, first_duplicate


@dataclass(slots=True)
class Tally:
    """One grader over one run's clusters (indexed as ``RunTallies.keys``)."""

    attempts: np.ndarray
    passes: np.ndarray
    score_sum: np.ndarray
    scores: np.ndarray
    reason_at: np.ndarray
    """Position of the cluster's first failure with a reason, -1 for none."""


@dataclass(slots=True)
class RunTallies:
    """One run, summed per cluster."""

    path: Path
    fmt: RunFormat
    keys: np.ndarray
    """The clusters' hashes, sorted (``np.unique``)."""
    first: np.ndarray
    """Position of each cluster's first sample (where its text is read)."""
    graders: list[str]
    """In the order first seen, ``OVERALL`` (the samples' verdicts) first."""
    tallies: dict[str, Tally]
    samples: int
    configs: dict[str, set[str]]
    """Each grader's fingerprints as the run's samples recorded them (none: not recorded)."""


def read_run(path: Path, fmt: RunFormat) -> RunTallies:
    """Read ``path`` once (see the module's docstring). Each sample adds its codes and scores
    to two columns, and the number of its *shape* (the grader names it holds, in order) to a
    third: a few appends a sample, however many graders."""
    graders: dict[str, int] = {OVERALL: 0}
    shapes: dict[tuple[str, ...], int] = {}
    clusters, checks, ids = array("q"), array("I"), IdHashes()
    shape_of, code, score = array("h"), array("b"), array("d")
    configs: list[dict[str, str]] = []
    for o in fmt.outcomes(path):
        if o.configs is not None and (not configs or o.configs != configs[-1]) and o.configs not in configs:
            configs.append(o.configs)
        key = o.cluster or o.id
        h = hash(key)
        clusters.append(h)
        checks.append(zlib.crc32(key.encode()))
        ids.values.append(h) if o.cluster is None else ids.add(o.id)
        shape = shapes.get(o.graders)
        if shape is None:
            shape = shapes[o.graders] = len(shapes)
            for name in o.graders:
                graders.setdefault(name, len(graders))
        shape_of.append(shape)
        code.extend(o.codes)
        score.extend(o.scores)
    _no_repeats(path, fmt, ids)
    keys, first, inverse = np.unique(np.frombuffer(clusters, dtype=np.int64), return_index=True,
                                     return_inverse=True)
    crc = np.frombuffer(checks, dtype=np.uint32)
    if (crc != crc[first][inverse]).any():
        raise AssayError(f"{path}: two different sample ids share a 64-bit hash; compare these runs in "
                         "smaller parts")
    del clusters, checks, ids, crc
    columns = _columns(np.frombuffer(shape_of, dtype=np.int16), [[0, *(graders[n] for n in names)]
                                                                  for names in shapes])
    codes, scores = np.frombuffer(code, dtype=np.int8), np.frombuffer(score, dtype=np.float64)
    tallies = {}
    for name, g in graders.items():
        at, obs = columns(g)
        tallies[name] = _tally(len(keys), inverse[at], at, codes[obs], scores[obs])
    fingerprints: dict[str, set[str]] = {}
    for seen in configs:
        for name, fingerprint in seen.items():
            fingerprints.setdefault(name, set()).add(fingerprint)
    return RunTallies(path, fmt, keys, first, list(graders), tallies, len(shape_of), fingerprints)


def _columns(shape_of: np.ndarray, shapes: list[list[int]]) -> Callable[[int], tuple[np.ndarray, np.ndarray]]:
    """For a grader, the positions of the samples it graded and where its codes and scores lie
    in the flat columns, in file order (a sample's values follow its shape's names); one grader
    at a time, so only one grader's indices are held."""
    widths = np.array([len(s) for s in shapes], dtype=np.int64)[shape_of]
    starts = np.cumsum(widths) - widths
    lines = [np.nonzero(shape_of == s)[0] for s in range(len(shapes))]

    def columns(g: int) -> tuple[np.ndarray, np.ndarray]:
        found = [(lines[s], starts[lines[s]] + j) for s, names in enumerate(shapes) for j, h in enumerate(names)
                 if h == g]
        if not found:
            return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
        at, obs = np.concatenate([a for a, _ in found]), np.concatenate([o for _, o in found])
        if len(found) > 1:  # several shapes or columns: back to file order, so sums add up as they did
            order = np.argsort(obs, kind="stable")
            at, obs = at[order], obs[order]
        return at, obs

    return columns


def _tally(size: int, cluster: np.ndarray, at: np.ndarray, code: np.ndarray, score: np.ndarray) -> Tally:
    scored = code != LEFT_OUT
    valid = scored & ~np.isnan(score)
    reasoned = code == REASONED
    reason_at = np.full(size, -1, dtype=np.int32)
    firsts, where = np.unique(cluster[reasoned], return_index=True)  # in file order: the first is the earliest
    reason_at[firsts] = at[reasoned][where]
    return Tally(np.bincount(cluster[scored], minlength=size).astype(np.int32),
                 np.bincount(cluster[code == PASSED], minlength=size).astype(np.int32),
                 np.bincount(cluster[valid], weights=score[valid], minlength=size),
                 np.bincount(cluster[valid], minlength=size).astype(np.int32), reason_at)


def _no_repeats(path: Path, fmt: RunFormat, ids: IdHashes) -> None:
    """A SpecError when a sample id appears twice (it would be paired twice)."""
    def numbered() -> list[tuple[int, str]]:
        return [(i + 1, o.id) for i, o in enumerate(fmt.outcomes(path))]

    repeated = first_duplicate(numbered, ids)
    if repeated is not None:
        sample_id, first_at, again = repeated
        raise SpecError(f"sample {sample_id!r} is written twice (samples {first_at} and {again}); a comparison "
                        "pairs each sample once", where=str(path))
