"""``similarity``: how alike output and expected are, in [0, 1]; passes at ``threshold``.

levenshtein: edit distance normalised by the longer string (rapidfuzz).
cosine: cosine of term-frequency vectors. jaccard: |A ∩ B| / |A ∪ B| of token sets.
Tokens are lower-cased words for spaced scripts and overlapping character bigrams for
unspaced ones (Chinese, Japanese kana, Thai, ...), so 北京是中国的首都 is not one token.
"""

from __future__ import annotations

import math
from operator import add
import re
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Literal

from pydantic import Field
from rapidfuzz.distance import Levenshtein
from rapidfuzz.process import cpdist
from rapidfuzz.utils import default_process

from assay.core.grader import Grader, GraderConfig
from assay.core.registry import register
from assay.core.result import GraderResult
from assay.core.sample import Sample
from assay.graders._text import as_text

# Scripts written without spaces between words.
_UNSPACED = (
    "\u0e00-\u0eff"  # Thai, Lao
    "\u1000-\u109f"  # Myanmar
    "\u1780-\u17ff"  # Khmer
    "\u3040-\u30ff"  # Hiragana, Katakana
    "\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"  # CJK ideographs
    "\U00020000-\U0002fa1f"
)
_HAS_UNSPACED = re.compile(f"[{_UNSPACED}]").search
_ALL_UNSPACED = re.compile(f"[{_UNSPACED}]+").fullmatch
_RUNS = re.compile(f"[{_UNSPACED}]+|[^{_UNSPACED}]+")


def tokenize(text: str) -> list[str]:
    """Lower-cased words, with runs of unspaced scripts cut into overlapping character bigrams.

    rapidfuzz's ``default_process`` (C++) lower-cases and turns punctuation into spaces, so
    the Python loop only sees words; a lone unspaced character stays a token of its own.
    """
    words = default_process(text).split()
    if text.isascii():
        return words
    out: list[str] = []
    keep, spread = out.append, out.extend
    for word in words:
        if word.isascii() or len(word) == 1 or not _HAS_UNSPACED(word):
            keep(word)
        elif _ALL_UNSPACED(word):
            spread(map(add, word[:-1], word[1:]))
        else:
            for part in _RUNS.findall(word):
                if len(part) > 1 and _HAS_UNSPACED(part):
                    spread(map(add, part[:-1], part[1:]))
                else:
                    keep(part)
    return out


def jaccard(a: str, b: str, tokens: Callable[[str], list[str]] = tokenize) -> float:
    if a == b:
        return 1.0
    sa, sb = set(tokens(a)), set(tokens(b))
    if not sa and not sb:
        return 1.0
    inter = len(sa & sb)
    return inter / (len(sa) + len(sb) - inter)


def cosine(a: str, b: str, tokens: Callable[[str], list[str]] = tokenize) -> float:
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
class Similarity(Grader):
    type = "similarity"
    description = "Text similarity (levenshtein, cosine or jaccard) at or above a threshold."
    Config = SimilarityConfig

    def grade(self, sample: Sample) -> GraderResult:
        return self.grade_batch([sample])[0]

    def grade_batch(self, samples: Sequence[Sample]) -> list[GraderResult]:
        cfg = self.config
        outputs = [s.output if s.output.__class__ is str else as_text(s.output) for s in samples]
        expected = [s.expected if s.expected.__class__ is str else as_text(s.expected) for s in samples]
        if cfg.algorithm == "levenshtein":
            if cfg.ignore_case:
                outputs = [t.casefold() for t in outputs]
                expected = [t.casefold() for t in expected]
            scores = cpdist(outputs, expected, scorer=Levenshtein.normalized_similarity, workers=1).tolist()
        else:
            fn = ALGORITHMS[cfg.algorithm]
            memo: dict[str, list[str]] = {}

            def tokens(text: str) -> list[str]:
                # A batch often repeats a reference text: tokenise each distinct text once.
                got = memo.get(text)
                if got is None:
                    got = memo[text] = tokenize(text)
                return got

            scores = [fn(a, b, tokens) for a, b in zip(outputs, expected)]
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
