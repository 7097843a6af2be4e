"""The C tokenizer (assay.graders._tokens) gives exactly what the pure-Python one does."""

import re
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from assay.graders import similarity as sim

_tokens = pytest.importorskip("assay.graders._tokens", reason="C extension not built (no compiler?)")

TABLE = [
    "", " ", "a", "中", "中 国", "北京是中国的首都", "東京 です", "Hello, World!", "abc中国def", "a中b",
    "中a国", "ひらがなカタカナ漢字", "สวัสดีครับ ภาษาไทย", "ລາວ", "မြန်မာ", "ខ្មែរ",  # Japanese, Thai, Lao, ...
    "안녕하세요 세계", "한국어中文", "नमस्ते दुनिया", "क्षत्रिय",  # Korean (spaced), Hindi combining marks
    "ΟΔΟΣ ΣΟΦΟΣ σοφος σοφοσ Σ ς", "İstanbul İİ i̇", "ǅ Ǆ ǆ", "ẞ ß",  # final sigma, Turkish İ, titlecase
    "😀 hi😀 👍🏽中", "e\u0301 é", "x_y __ 9_a", "\ud800 lone\udfff surrogates",
    "UPPER lower MiXeD ÀÉÎ", "ＡＢＣ ｆｕｌｌ１２", "\U00020000\U0002a6d6 \U0002fa1f\U0002fa20",
    "a\tb\nc\x0bd\x0ce\rf\x1cg\x1dh\x1ei\x1fj\x85k\u2028l\u2029m\u3000n\u1680o\u200bp",
]
# One character from each end of every separator range, glued between words.
for lo, hi in sim._PUNCT_RANGES:
    TABLE.append(f"a{chr(lo)}b{chr(hi)}c中{chr(lo)}国{chr(hi)}")
TABLE.append("".join(f"w{c}" for c in "!\"#$%&'()*+,-./:;<=>?@[\\]^`{|}~\x7f\x00"))
for lo, hi in sim._UNSPACED_RANGES:
    TABLE.append(f"x{chr(lo)}{chr(hi)}y {chr(lo)} {chr(lo - 1)}{chr(hi + 1)}")


@pytest.mark.parametrize("text", TABLE)
def test_tokenize_parity_table(text):
    assert _tokens.tokenize(text) == sim.py_tokenize(text)


def test_tokenize_examples():
    assert sim.py_tokenize("ΟΔΟΣ σοφος") == ["οδοσ", "σοφοσ"]
    assert sim.py_tokenize("İstanbul") == ["istanbul"]
    assert sim.py_tokenize("नमस्ते") == ["नमस्ते"]  # virama and vowel signs stay in the word
    assert sim.py_tokenize("a中b国c") == ["a", "中", "b", "国", "c"]
    assert sim.py_tokenize("x_y-z×w") == ["x_y", "z", "w"]
    assert sim.py_tokenize("中国人\u3001日本") == ["中国", "国人", "日本"]


def test_every_code_point():
    """Lower-casing and class of each code point: "a" + c gives ["a" + c], ["a", c] or ["a"]."""
    chars = [chr(c) for c in range(sys.maxunicode + 1)]
    text = " ".join("a" + c for c in chars)
    got = _tokens.tokenize(text)
    assert got == sim.py_tokenize(text)
    assert len(got) > len(chars)  # sanity: a mix of all three outcomes


def test_ranges_mirrored_in_c():
    source = Path(sim.__file__).with_name("_tokens.c")
    if not source.exists():
        pytest.skip("C source not installed")
    text = source.read_text()

    def table(name):
        body = re.search(rf"{name}\[\]\[2\] = \{{(.*?)\}};", text, re.S).group(1)
        return tuple((int(lo, 16), int(hi, 16)) for lo, hi in re.findall(r"\{(0x\w+), (0x\w+)\}", body))

    assert table("UNSPACED") == sim._UNSPACED_RANGES
    assert table("PUNCT") == sim._PUNCT_RANGES


def test_extension_is_used():
    assert sim.tokenize is _tokens.tokenize and sim.jaccard_many is _tokens.jaccard_many


PAIRS = [(a, b) for a in TABLE[:12] for b in TABLE[:12]] + [
    ("the cat sat", "the cat sat"), ("a a b", "a b b"), ("a b c", "b c d"), ("", "x"), ("!!", "??"),
    ("北京是中国的首都", "北京是中国首都"), ("北京是中国的首都", "中国的首都是北京"), ("ΟΔΟΣ", "οδος"),
]


@pytest.mark.parametrize("name", ["jaccard", "cosine"])
def test_score_parity_table(name):
    c_fn, py_fn = getattr(_tokens, name), getattr(sim, f"py_{name}")
    a, b = zip(*PAIRS)
    expected = [py_fn(x, y) for x, y in PAIRS]
    assert [c_fn(x, y) for x, y in PAIRS] == expected
    assert getattr(_tokens, f"{name}_many")(list(a), list(b)) == expected
    assert getattr(_tokens, f"{name}_many")(a, b) == expected  # any sequence
    assert sim._py_many(py_fn)(list(a), list(b)) == expected


def test_errors():
    with pytest.raises(TypeError):
        _tokens.jaccard("a", None)
    with pytest.raises(TypeError):
        _tokens.cosine("a")
    with pytest.raises(TypeError):
        _tokens.tokenize(b"a")
    with pytest.raises(TypeError):
        _tokens.cosine_many(["a"], [1])
    with pytest.raises(ValueError):
        _tokens.jaccard_many(["a"], [])
    with pytest.raises(TypeError):
        _tokens.jaccard_many(1, [])


# Random text: any code point, or a bias towards the interesting ones, so runs and repeats occur.
ALPHABET = list("aAbB_1 ,.-\t\n") + list("中国人日本のです") + list("สวัส") + list("नमस्ते") + list(
    "ΣΟσος") + ["İ", "I", "i", "ǅ", "😀", "\u0301", "\u00a0", "\u00d7", "\u3001", "\uff01", "ｆ", "\u2028",
                "\U00020001", "\u0e00", "\u0eff", "\u109f"]
any_text = st.text(max_size=60)
biased_text = st.text(st.sampled_from(ALPHABET), max_size=60)
texts = st.one_of(any_text, biased_text)
words = st.lists(st.sampled_from(["the", "Cat", "中国", "国人", "σοφος", "ΣΟΦΟΣ", "नमस्ते", "x", "中"]),
                 max_size=12).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(texts)
def test_tokenize_parity_random(text):
    assert _tokens.tokenize(text) == sim.py_tokenize(text)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.tuples(texts, texts), st.tuples(words, words)))
def test_score_parity_random(pair):
    a, b = pair
    assert _tokens.jaccard(a, b) == sim.py_jaccard(a, b)
    assert _tokens.cosine(a, b) == sim.py_cosine(a, b)
    assert _tokens.jaccard_many([a, b], [b, b]) == [sim.py_jaccard(a, b), 1.0]
    assert _tokens.cosine_many([a, b], [b, a]) == [sim.py_cosine(a, b), sim.py_cosine(b, a)]


def test_build_implements_current_rules():
    """A build from older source is ignored by similarity.py, which this test would then catch."""
    assert _tokens.RULES == sim.RULES


@pytest.mark.parametrize("a, b", [("", "!!"), ("!!", "??"), (" ", ""), ("…", "—"), ("", "\u3000")])
def test_token_empty_texts_score_zero_unless_equal(a, b):
    for c_fn, py_fn in ((_tokens.jaccard, sim.py_jaccard), (_tokens.cosine, sim.py_cosine)):
        assert c_fn(a, b) == py_fn(a, b) == 0.0
        assert c_fn(a, a) == py_fn(a, a) == 1.0
    assert _tokens.jaccard_many([a, a], [b, a]) == sim._py_many(sim.py_jaccard)([a, a], [b, a]) == [0.0, 1.0]
    assert _tokens.cosine_many([a, a], [b, a]) == sim._py_many(sim.py_cosine)([a, a], [b, a]) == [0.0, 1.0]
