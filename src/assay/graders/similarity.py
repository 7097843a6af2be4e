"""``similarity``: how alike output and expected are, in [0, 1]; passes at ``threshold``.

levenshtein: edit distance normalised by the longer string (rapidfuzz).
cosine: cosine of token-count vectors. jaccard: |A ∩ B| / |A ∪ B| of token sets.
Tokens (see ``tokenize``) are lower-cased words for spaced scripts and overlapping character
bigrams for unspaced ones (Chinese, Japanese kana, Thai, ...), so 北京是中国的首都 is not one
token. cosine and jaccard run in the C extension ``assay.graders._tokens`` when it is built;
the pure-Python functions here (``py_tokenize``, ``py_jaccard``, ``py_cosine``) define the same
results and are used otherwise. tests/graders/test_tokens.py checks that the two agree.
"""

from __future__ import annotations

import logging
import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from operator import add
from typing import Literal

import numpy as np
from pydantic import Field
from rapidfuzz.distance import Levenshtein
from rapidfuzz.process import cpdist

from assay.core.grader import BatchGrader, GraderConfig
from assay.core.registry import register
from assay.core.result import GraderResult
from assay.core.sample import Sample
from assay.graders._text import as_text

log = logging.getLogger("assay.graders.similarity")

# Scripts written without spaces between words, as inclusive code point ranges.
# MIRRORED by UNSPACED in _tokens.c: change both (test_tokens.py checks they agree).
_UNSPACED_RANGES = (
    (0x0E00, 0x0EFF),  # Thai, Lao
    (0x1000, 0x109F),  # Myanmar
    (0x1780, 0x17FF),  # Khmer
    (0x3040, 0x30FF),  # Hiragana, Katakana
    (0x3400, 0x4DBF), (0x4E00, 0x9FFF), (0xF900, 0xFAFF),  # CJK ideographs
    (0x20000, 0x2FA1F),  # CJK ideographs, supplementary planes
)
# Punctuation and symbols outside ASCII that separate tokens. MIRRORED by PUNCT in _tokens.c.
_PUNCT_RANGES = (
    (0x00A0, 0x00BF),  # Latin-1 punctuation and symbols
    (0x00D7, 0x00D7), (0x00F7, 0x00F7),  # × ÷
    (0x2000, 0x206F),  # general punctuation
    (0x3000, 0x303F),  # CJK symbols and punctuation
    (0xFF00, 0xFF0F), (0xFF1A, 0xFF20), (0xFF3B, 0xFF40), (0xFF5B, 0xFF65),  # fullwidth forms
)


def _char_class(ranges: tuple[tuple[int, int], ...]) -> str:
    return "".join(f"\\U{lo:08x}-\\U{hi:08x}" for lo, hi in ranges)


_UNSPACED = _char_class(_UNSPACED_RANGES)
# Separators: ASCII other than [0-9A-Za-z_], whitespace (re's \s is str.isspace()), _PUNCT_RANGES.
_SEPARATORS = r"\x00-\x2f\x3a-\x40\x5b-\x5e\x60\x7b-\x7f\s" + _char_class(_PUNCT_RANGES)
# Maximal runs of unspaced characters (group 1) and of other token characters (group 2).
_RUNS = re.compile(f"([{_UNSPACED}]+)|([^{_UNSPACED}{_SEPARATORS}]+)").findall
_ASCII_WORDS = re.compile("[0-9a-z_]+").findall


def py_tokenize(text: str) -> list[str]:
    """Lower-cased words, with runs of unspaced scripts cut into overlapping character bigrams.

    1. Lower-case: İ (U+0130) becomes i, then ``str.lower()``, then final sigma ς becomes σ.
    2. Separators: ASCII other than ``[0-9A-Za-z_]``, whitespace (``str.isspace()``) and the
       ``_PUNCT_RANGES``; every other character belongs to a token (so combining marks, as in
       Hindi, stay inside their word).
    3. Between separators, maximal runs of unspaced characters (``_UNSPACED_RANGES``) and of
       other token characters alternate. Another run is one token (a word); an unspaced run of
       one character is one token, a longer one gives its n-1 overlapping bigrams.

    ``tokenize`` is this function, or the identical one in ``assay.graders._tokens``.
    """
    text = text.replace("\u0130", "i").lower()
    if text.isascii():
        return _ASCII_WORDS(text)
    if "\u03c2" in text:
        text = text.replace("\u03c2", "\u03c3")
    out: list[str] = []
    keep, spread = out.append, out.extend
    for unspaced, word in _RUNS(text):
        if word or len(unspaced) == 1:
            keep(word or unspaced)
        else:
            spread(map(add, unspaced[:-1], unspaced[1:]))
    return out


def py_jaccard(a: str, b: str, tokens: Callable[[str], list[str]] = py_tokenize) -> float:
    if a == b:
        return 1.0
    sa, sb = set(tokens(a)), set(tokens(b))
    if not sa and not sb:
        return 1.0
    inter = len(sa & sb)
    return inter / (len(sa) + len(sb) - inter)


def py_cosine(a: str, b: str, tokens: Callable[[str], list[str]] = py_tokenize) -> float:
    if a == b:
        return 1.0
    ca, cb = Counter(tokens(a)), Counter(tokens(b))
    if not ca and not cb:
        return 1.0
    if not ca or not cb:
        return 0.0
    if len(ca) > len(cb):
        ca, cb = cb, ca
    dot = sum(n * cb[t] for t, n in ca.items() if t in cb)
    if not dot:
        return 0.0
    norm = math.sqrt(sum(n * n for n in ca.values())) * math.sqrt(sum(n * n for n in cb.values()))
    return min(1.0, round(dot / norm, 12))  # identical texts give exactly 1, not 0.9999999999999999


def _py_many(fn: Callable[..., float]) -> Callable[[list[str], list[str]], list[float]]:
    def many(outputs: list[str], expected: list[str]) -> list[float]:
        memo: dict[str, list[str]] = {}

        def tokens(text: str) -> list[str]:
            # A batch often repeats a reference text: tokenise each distinct text once.
            got = memo.get(text)
            if got is None:
                got = memo[text] = py_tokenize(text)
            return got

        if len(outputs) != len(expected):
            raise ValueError(f"{len(outputs)} outputs but {len(expected)} expected texts")
        return [fn(a, b, tokens) for a, b in zip(outputs, expected)]

    return many


try:
    from assay.graders import _tokens
except ImportError:  # not built (no C compiler at install time): same results, slower
    _tokens = None  # type: ignore[assignment]
    log.debug("similarity: C extension assay.graders._tokens not available, using pure Python")
    tokenize, jaccard, cosine = py_tokenize, py_jaccard, py_cosine
    jaccard_many, cosine_many = _py_many(py_jaccard), _py_many(py_cosine)
else:
    log.debug("similarity: using the C extension assay.graders._tokens")
    tokenize, jaccard, cosine = _tokens.tokenize, _tokens.jaccard, _tokens.cosine
    jaccard_many, cosine_many = _tokens.jaccard_many, _tokens.cosine_many


def levenshtein(a: str, b: str) -> float:
    return Levenshtein.normalized_similarity(a, b)


ALGORITHMS = {"levenshtein": levenshtein, "cosine": cosine, "jaccard": jaccard}


class SimilarityConfig(GraderConfig):
    threshold: float = Field(default=0.8, ge=0.0, le=1.0, description="Pass when similarity ≥ threshold.")
    algorithm: Literal["levenshtein", "cosine", "jaccard"] = Field(
        default="levenshtein", description="levenshtein (short text), cosine (long text), jaccard (keywords).")
    ignore_case: bool = Field(default=False, description="levenshtein only: compare case-insensitively "
                                                        "(cosine and jaccard always fold case).")


@register
class Similarity(BatchGrader):
    type = "similarity"
    description = "Text similarity (levenshtein, cosine or jaccard) at or above a threshold."
    Config = SimilarityConfig

    def grade_batch(self, samples: Sequence[Sample]) -> list[GraderResult]:
        cfg = self.config
        outputs = [s.output if s.output.__class__ is str else as_text(s.output) for s in samples]
        expected = [s.expected if s.expected.__class__ is str else as_text(s.expected) for s in samples]
        if cfg.algorithm == "levenshtein":
            if cfg.ignore_case:
                outputs = [t.casefold() for t in outputs]
                expected = [t.casefold() for t in expected]
            # score_hint: rapidfuzz tries a narrow diagonal band first and widens it only when
            # needed; scores stay exact, and pairs near the threshold cost half as much.
            # dtype: cpdist answers float32 unless asked, which would blur scores near a threshold.
            scores = cpdist(outputs, expected, scorer=Levenshtein.normalized_similarity, workers=1,
                            score_hint=cfg.threshold or None, dtype=np.float64).tolist()
        else:
            scores = (cosine_many if cfg.algorithm == "cosine" else jaccard_many)(outputs, expected)
        threshold = cfg.threshold
        verdict = self.verdict
        algo = cfg.algorithm
        out = []
        for score in scores:
            score = 0.0 if score < 0.0 else 1.0 if score > 1.0 else float(score)
            if score >= threshold:
                out.append(verdict(True, score))
            else:
                out.append(verdict(False, score, f"{algo} similarity {score:.3f} is below {threshold}"))
        return out
