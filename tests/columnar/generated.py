"""A generated dataset for comparing the columnar path with the object path row by row.

Texts mix ASCII, CJK, emoji, accents (composed and not), Unicode whitespace, case pairs that
only a Unicode case fold equates (ß/SS, Σ/ς), empty strings, nulls, long strings, multi-line
text, JSON (valid, invalid, schema-breaking). ``mixed_rows`` adds values that are not text
(numbers, booleans, objects, lists) for the paths that take them row by row.
"""

from __future__ import annotations

import random
from typing import Any

PIECES = [
    "hello", "Hello", "HELLO", "world", "the answer is 42", "北京", "首都", "北京是中国的首都", "東京は日本の首都です",
    "😀", "👍🏽", "naïve", "nai\u0308ve", "café", "cafe\u0301", "straße", "STRASSE", "ΣΊΣΥΦΟΣ", "σίσυφος", "ﬁle",
    " ", "\t", "\n", "\u3000", "\u00a0", "\x1c", "\u2028", "a\nb", "line1\nline2\r\n", "x" * 300, "é" * 150,
    "ab" * 2500, "", "İstanbul", "ǅ", "0", "42", "-1.5e3", "true", "null", "[1,2]", '{"a": 1}',
]
JSON_TEXTS = [
    '{"id": 1, "name": "x", "tags": ["a"]}', '{"id": -1, "name": "x", "tags": []}', '{"id": 1}',
    '{"id": "1", "name": 2, "tags": [1, 2, 3]}', "[1, 2", "not json", "", "null", "42", '"text"',
    '{"id": 1, "name": "北京", "tags": ["😀"], "score": 1e400}', '{"id": 1, "name": "a", "tags": ["b"], "x": "' + "y" * 3000 + '"}',
    '{"a": {"b": {"c": [1, {"d": null}]}}}', "\ufeff{}", '{"id": 12345678901234567890123, "name": "n", "tags": []}',
    '{"id": 1, "name": "x", "tags": ["a"]} trailing', "NaN", '{"id": 1, "name": "x", "tags": ["a"], "score": "high"}',
    '{"name": "北京", "tags": [', '{"名": 1,}', '{"id": 1, "name": "😀", "tags": ["a"]} 尾',
]


def _text(rng: random.Random) -> str:
    k = rng.choice([0, 1, 1, 2, 3, 5])
    return "".join(rng.choice(PIECES) + rng.choice(["", " ", "", "\n"]) for _ in range(k))


def _expected(rng: random.Random, output: str | None) -> str | None:
    roll = rng.random()
    if output is None or roll < 0.1:
        return None if rng.random() < 0.5 else _text(rng)
    if roll < 0.35:
        return output
    if roll < 0.5:  # a piece of the output, for contains
        i = rng.randrange(len(output) + 1)
        return output[i:i + rng.randint(0, 8)]
    if roll < 0.6:
        return output.upper() if rng.random() < 0.5 else f"  {output}\t"
    if roll < 0.7:
        return output.casefold()
    return _text(rng)


def text_rows(n: int = 600, seed: int = 11) -> list[dict[str, Any]]:
    """Rows whose output and expected are text or null."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        roll = rng.random()
        if roll < 0.06:
            output = None
        elif roll < 0.3:
            output = rng.choice(JSON_TEXTS)
        else:
            output = _text(rng)
        rows.append({"id": f"r{i}", "output": output, "expected": _expected(rng, output)})
    return rows


OTHER_VALUES: list[Any] = [42, 1.0, 1, -0.0, True, False, {"answer": 42}, [1, "a"], {"b": 1, "a": [None]}, 3.5, "42"]


def mixed_rows(n: int = 400, seed: int = 12) -> list[dict[str, Any]]:
    """Like ``text_rows``, but about one row in five has an output or expected value that is
    not text (a number, a boolean, an object, a list)."""
    rng = random.Random(seed)
    rows = text_rows(n, seed)
    for row in rows:
        if rng.random() < 0.1:
            row["output"] = rng.choice(OTHER_VALUES)
        if rng.random() < 0.1:
            row["expected"] = rng.choice(OTHER_VALUES)
    return rows


SCHEMA = {"type": "object", "required": ["id", "name", "tags"],
          "properties": {"id": {"type": "integer", "minimum": 0}, "name": {"type": "string"},
                         "tags": {"type": "array", "items": {"type": "string"}}, "score": {"type": "number"}}}

SPECS: list[dict[str, Any]] = [
    {"type": "exact_match"},
    {"type": "exact_match", "config": {"trim": True}},
    {"type": "exact_match", "config": {"ignore_case": True}},
    {"type": "exact_match", "config": {"trim": True, "ignore_case": True}},
    {"type": "contains"},
    {"type": "contains", "config": {"ignore_case": True}},
    {"type": "regex", "config": {"pattern": "hello"}},
    {"type": "regex", "config": {"pattern": "^hello$", "flags": "im"}},
    {"type": "regex", "config": {"pattern": "a.b", "flags": "s"}},
    {"type": "regex", "config": {"pattern": "[\\u4e00-\\u9fff]{2,}", "flags": "u"}},
    {"type": "regex", "config": {"pattern": "\\u{1F600}|\\p{Greek}+"}},
    {"type": "regex", "config": {"pattern": "x*"}},
    {"type": "regex", "config": {"pattern": "\\bcafe\\b|straße", "flags": "gi"}},
    {"type": "regex", "config": {"pattern": "(?:ab){2000}"}},
    {"type": "regex", "config": {"pattern": "(l)\\1", "timeout_ms": 10000}},  # backreference: the object path
    {"type": "regex", "config": {"must_match": ["\\d", "北"], "must_not_match": ["(?i)error", "^$"]}},
    {"type": "json_schema", "config": {"schema": SCHEMA}},
    {"type": "json_schema", "config": {"schema": {"type": "array", "maxItems": 1}}},
    {"type": "json_schema", "config": {"schema": True}},
    {"type": "similarity"},
    {"type": "similarity", "config": {"threshold": 0.5, "ignore_case": True}},
    {"type": "similarity", "config": {"normalize": "none", "threshold": 0.3}},
    {"type": "similarity", "config": {"normalize": "NFKC", "max_length": 200}},
    {"type": "similarity", "config": {"algorithm": "jaccard", "threshold": 0.4}},
    {"type": "similarity", "config": {"algorithm": "cosine", "max_length": 500}},
    {"type": "similarity", "config": {"algorithm": "cosine", "ignore_case": True, "threshold": 0.0}},
]
"""Every preset grader with the configs that take different paths through its kernel."""
