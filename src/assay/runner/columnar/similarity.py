"""``similarity`` over columns: rapidfuzz ``cpdist`` with workers (levenshtein), the C
tokenizer's batch functions (jaccard, cosine).

The texts are prepared as the grader prepares them: ASCII rows need no Unicode normalisation
(and their casefold is Arrow's ``ascii_lower``), other rows go through the grader's own
``_prepare``. Rows too long to compare (the grader's ``invalid_output`` error) go to the
object path. Scores, thresholds and reasons are the grader's.
"""

from __future__ import annotations

import os
import unicodedata

import numpy as np
import pyarrow.compute as pc

from assay.graders import similarity as sim
from assay.runner.columnar._columns import Graded
from assay.runner.columnar._frame import Frame, take_text


def grade(grader: sim.Similarity, frame: Frame, *, workers: int = 1) -> Graded | None:
    cfg = grader.config
    output, expected = frame.filled("output"), frame.filled("expected")
    if output is None or expected is None:
        return None
    texts = [output, expected]
    fold = cfg.ignore_case and cfg.algorithm == "levenshtein"
    # Too long as given: exact for every row whose text preparing leaves unchanged (the others,
    # re-checked below, are the grader's to decide)
    undecided = np.zeros(frame.n, dtype=bool)
    for arr in texts:
        undecided |= pc.greater(pc.utf8_length(arr), cfg.max_length).to_numpy(zero_copy_only=False)
    prepared = [(pc.ascii_lower(arr) if fold else arr).to_pylist() for arr in texts]
    others = np.flatnonzero(~frame.ascii)  # ASCII is already normalised, and its casefold is ascii_lower
    if len(others):
        originals = [take_text(arr, others) for arr in texts] if fold else prepared
        form, normalised = cfg.normalize, unicodedata.is_normalized
        for k, i in enumerate(others.tolist()):
            a, b = (originals[0][k], originals[1][k]) if fold else (prepared[0][i], prepared[1][i])
            if not fold and (form == "none" or (normalised(form, a) and normalised(form, b))):
                continue  # unchanged by _prepare
            try:  # the grader's own normalisation and limits
                prepared[0][i], prepared[1][i] = sim._prepare(a, cfg, "output"), sim._prepare(b, cfg, "expected")
                undecided[i] = False
            except ValueError:
                undecided[i] = True
    outputs, expected = prepared
    if undecided.any():
        for i in np.flatnonzero(undecided).tolist():
            outputs[i] = expected[i] = ""  # a cheap placeholder pair: the object path grades the row
    scores = _scores(cfg, outputs, expected, workers)
    scores = np.clip(scores, 0.0, 1.0)
    passed = scores >= cfg.threshold

    def explain(rows: np.ndarray, with_details: bool) -> tuple[list[str | None], None]:
        below, algorithm, threshold = sim.BELOW, cfg.algorithm, cfg.threshold
        return [below(algorithm=algorithm, score=f"{s:.3f}", threshold=threshold) for s in scores[rows].tolist()], None

    return Graded(passed, explain, score=scores, undecided=undecided if undecided.any() else None)


def _scores(cfg: sim.SimilarityConfig, outputs: list[str], expected: list[str], workers: int) -> np.ndarray:
    if cfg.algorithm != "levenshtein":
        many = sim.cosine_many if cfg.algorithm == "cosine" else sim.jaccard_many
        return np.asarray(many(outputs, expected), dtype=np.float64)
    from rapidfuzz.distance import Levenshtein
    from rapidfuzz.process import cpdist

    if workers == 0:
        workers = os.cpu_count() or 1
    # score_hint and float64 as the grader asks them (see similarity._levenshtein_many)
    return cpdist(outputs, expected, scorer=Levenshtein.normalized_similarity, workers=workers,
                  score_hint=cfg.threshold or None, dtype=np.float64)
