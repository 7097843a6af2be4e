"""``similarity``: how alike output and expected are, in [0, 1]; passes at ``threshold``.

levenshtein: edit distance normalised by the longer string (rapidfuzz).
cosine: cosine of token-count vectors. jaccard: |A ∩ B| / |A ∪ B| of token sets.
Tokens (see ``tokenize``) are lower-cased words for spaced scripts and overlapping character
bigrams for unspaced ones (Chinese, Japanese kana, Thai, ...), so 北京是中国的首都 is not one
token. cosine and jaccard run in the C extension ``assay.graders._tokens`` when it is built;
the pure-Python functions here (``py_tokenize``, ``py_jaccard``, ``py_cosine``) define the same
results and are used otherwise. tests/graders/test_tokens.py checks that the two agree.

Equal texts score 1. Texts without tokens (empty, or only spaces and punctuation) have nothing
to compare, so cosine and jaccard score them 1 only when they are equal and 0 otherwise ("" is
not "!!"). Before comparing, both texts are Unicode-normalised (``normalize``, NFC by default,
so a precomposed é equals e + combining accent), and texts longer than ``max_length``
characters are an ``invalid_output`` error rather than a slow comparison.
"""

from __future__ import annotations

import logging
import math
import re
import sys
import unicodedata
from collections import Counter
from collections.abc import Callable, Sequence
from operator import add
from typing import Literal

from pydantic import Field
from rapidfuzz.distance import Levenshtein

from assay.core.grader import BatchGrader, GraderConfig, Traits
from assay.core.messages import Phrase, Said
from assay.core.registry import register
from assay.core.result import ErrorCode, GraderResult
from assay.core.sample import Sample
from assay.core.untrusted import MAX_DEPTH, TooDeep
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
        return 0.0  # unequal texts without tokens: nothing in common
    inter = len(sa & sb)
    return inter / (len(sa) + len(sb) - inter)


def py_cosine(a: str, b: str, tokens: Callable[[str], list[str]] = py_tokenize) -> float:
    if a == b:
        return 1.0
    ca, cb = Counter(tokens(a)), Counter(tokens(b))
    if not ca or not cb:
        return 0.0  # unequal texts, at least one of them without tokens
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


RULES = 2
"""Version of the scoring rules above. ``_tokens.c`` declares the version it implements, and a
build of an older version (compiled before the rules changed) is not used."""

# Pure Python first; the C extension's functions replace them below when it is usable.
tokenize: Callable[[str], list[str]] = py_tokenize
jaccard: Callable[[str, str], float] = py_jaccard
cosine: Callable[[str, str], float] = py_cosine
jaccard_many: Callable[[list[str], list[str]], list[float]] = _py_many(py_jaccard)
cosine_many: Callable[[list[str], list[str]], list[float]] = _py_many(py_cosine)
try:
    from assay.graders import _tokens
except ImportError:  # not built (no C compiler at install time): same results, slower
    log.debug("similarity: C extension assay.graders._tokens not available, using pure Python")
else:
    if getattr(_tokens, "RULES", 1) != RULES:
        log.warning("similarity: assay.graders._tokens was built from older source; using pure Python "
                    "(rebuild it: pip install -e .)")
    else:
        log.debug("similarity: using the C extension assay.graders._tokens")
        tokenize, jaccard, cosine = _tokens.tokenize, _tokens.jaccard, _tokens.cosine
        jaccard_many, cosine_many = _tokens.jaccard_many, _tokens.cosine_many


def levenshtein(a: str, b: str) -> float:
    return Levenshtein.normalized_similarity(a, b)


ALGORITHMS = {"levenshtein": levenshtein, "cosine": cosine, "jaccard": jaccard}


MAX_LENGTH = 100_000
"""Default longest text compared. levenshtein's cost grows with the product of the two lengths:
two texts of this length take about 0.3 s; cosine and jaccard grow linearly."""


class SimilarityConfig(GraderConfig):
    threshold: float = Field(default=0.8, ge=0.0, le=1.0, description="Pass when similarity ≥ threshold.")
    algorithm: Literal["levenshtein", "cosine", "jaccard"] = Field(
        default="levenshtein", description="levenshtein (short text), cosine (long text), jaccard (keywords).")
    ignore_case: bool = Field(default=False, description="levenshtein only: compare case-insensitively "
                                                        "(cosine and jaccard always fold case).")
    normalize: Literal["NFC", "NFKC", "none"] = Field(
        default="NFC", description="Unicode normalisation of both texts before comparing: NFC (composed "
                                   "characters, so é typed either way is equal), NFKC (also folds "
                                   "compatibility forms: ﬁ is fi, ① is 1) or none.")
    max_length: int = Field(
        default=MAX_LENGTH, ge=1, le=10_000_000,
        description="Longest output or expected text compared, in characters (after normalising); a "
                    "longer one is an invalid_output error. levenshtein's time grows with the product of "
                    "the two lengths (two 100,000-character texts: about 0.3 s).")


BELOW = Phrase("similarity.below", "{algorithm} similarity {score} is below {threshold}")
TOO_DEEP = {"output": Phrase("similarity.output_too_deep", "output is nested more than {depth} levels deep"),
            "expected": Phrase("similarity.expected_too_deep", "expected is nested more than {depth} levels deep")}
TOO_LONG = {"output": Phrase("similarity.output_too_long", "output is {length} characters long; similarity "
                                                           "compares at most {limit} (config max_length)"),
            "expected": Phrase("similarity.expected_too_long", "expected is {length} characters long; similarity "
                                                               "compares at most {limit} (config max_length)")}


class _Incomparable(ValueError):
    """Why a value cannot be compared, said by a phrase."""

    def __init__(self, said: Said) -> None:
        super().__init__(said)
        self.said = said


def _prepare(value: object, cfg: SimilarityConfig, what: str) -> str:
    """The text to compare, normalised; raises _Incomparable saying why a value cannot be compared."""
    try:
        text = value if value.__class__ is str else as_text(value)
    except TooDeep:
        raise _Incomparable(TOO_DEEP[what](depth=MAX_DEPTH)) from None
    limit = cfg.max_length
    if len(text) <= limit:  # normalising may lengthen the text: measured again below
        form = cfg.normalize
        if form != "none" and not unicodedata.is_normalized(form, text):
            text = unicodedata.normalize(form, text)
        if cfg.ignore_case and cfg.algorithm == "levenshtein":
            text = text.casefold()
            if form != "none" and not unicodedata.is_normalized(form, text):
                text = unicodedata.normalize(form, text)
    if len(text) > limit:
        raise _Incomparable(TOO_LONG[what](length=f"{len(text):,}", limit=f"{limit:,}"))
    return text


CPDIST_MIN = 20_000
"""Pairs from which rapidfuzz's ``cpdist`` (which needs numpy) is used; smaller batches score
pair by pair, which is as fast there and spares a short run numpy's import (~0.1 s)."""


def _levenshtein_many(outputs: list[str], expected: list[str], hint: float | None) -> list[float]:
    """Normalised Levenshtein similarity of each pair (exact: ``score_hint`` only lets rapidfuzz
    try a narrow diagonal band first, so pairs near the threshold cost half as much)."""
    if len(outputs) < CPDIST_MIN and "numpy" not in sys.modules:
        score = Levenshtein.normalized_similarity
        return [score(a, b, score_hint=hint) for a, b in zip(outputs, expected)]
    import numpy as np
    from rapidfuzz.process import cpdist

    # dtype: cpdist answers float32 unless asked, which would blur scores near a threshold.
    return cpdist(outputs, expected, scorer=Levenshtein.normalized_similarity, workers=1, score_hint=hint,
                  dtype=np.float64).tolist()


@register
class Similarity(BatchGrader[SimilarityConfig]):
    type = "similarity"
    description = "Text similarity (levenshtein, cosine or jaccard) at or above a threshold."
    traits = Traits(api_safe=True, inline=True, form=True, kernel="assay.runner.columnar.similarity:grade")

    def grade_batch(self, samples: Sequence[Sample]) -> list[GraderResult]:
        cfg = self.config
        outputs, expected = [], []
        refused: dict[int, Said] = {}
        for i, s in enumerate(samples):
            try:
                a, b = _prepare(s.output, cfg, "output"), _prepare(s.expected, cfg, "expected")
            except _Incomparable as exc:
                refused[i] = exc.said
                a = b = ""  # a placeholder pair, cheap to score; its result is the error
            outputs.append(a)
            expected.append(b)
        if cfg.algorithm == "levenshtein":
            # score_hint: rapidfuzz tries a narrow diagonal band first and widens it only when
            # needed; scores stay exact, and pairs near the threshold cost half as much.
            # dtype: cpdist answers float32 unless asked, which would blur scores near a threshold.
            scores = _levenshtein_many(outputs, expected, cfg.threshold or None)
        else:
            scores = (cosine_many if cfg.algorithm == "cosine" else jaccard_many)(outputs, expected)
        threshold = cfg.threshold
        scored = self.scored_result
        algo = cfg.algorithm
        out = []
        for i, score in enumerate(scores):
            if refused and i in refused:
                out.append(self.error_result(ErrorCode.INVALID_OUTPUT, refused[i]))
                continue
            score = 0.0 if score < 0.0 else 1.0 if score > 1.0 else float(score)
            if score >= threshold:
                out.append(scored(True, score))
            else:
                out.append(scored(False, score, BELOW(algorithm=algo, score=f"{score:.3f}", threshold=threshold)))
        return out
