import pytest

from assay.core.errors import SpecError
from assay.core.spec import compile_spec
from assay.graders.similarity import cosine, jaccard, levenshtein, tokenize


def test_levenshtein_normalised_by_longer_string():
    assert levenshtein("kitten", "sitting") == pytest.approx(1 - 3 / 7)
    assert levenshtein("", "") == 1.0
    assert levenshtein("abc", "") == 0.0
    assert levenshtein("北京是中国的首都", "北京是中国首都") == pytest.approx(1 - 1 / 8)


def test_cjk_is_tokenised_into_bigrams():
    assert tokenize("北京是中国的首都") == ["北京", "京是", "是中", "中国", "国的", "的首", "首都"]
    assert tokenize("東京 です") == ["東京", "です"]
    assert tokenize("Hello, World!") == ["hello", "world"]
    assert tokenize("abc中国def") == ["abc", "中国", "def"]
    assert tokenize("中") == ["中"]


def test_jaccard():
    assert jaccard("the cat sat", "the cat sat") == 1.0
    assert jaccard("the cat", "a dog") == 0.0
    assert jaccard("a b c", "b c d") == pytest.approx(2 / 4)
    assert jaccard("北京是中国的首都", "北京是中国首都") == pytest.approx(5 / 8)
    assert jaccard("", "") == 1.0
    assert jaccard("", "x") == 0.0


def test_cosine():
    assert cosine("a a b", "a a b") == pytest.approx(1.0)
    assert cosine("a b", "c d") == 0.0
    assert cosine("a a b", "a b b") == pytest.approx(4 / 5)
    assert cosine("", "") == 1.0
    assert cosine("x", "") == 0.0
    # Chinese without spaces is still compared term by term, not as one token
    assert 0.5 < cosine("北京是中国的首都", "中国的首都是北京") < 1.0


@pytest.mark.parametrize("algorithm", ["levenshtein", "cosine", "jaccard"])
def test_threshold_and_score(grade, algorithm):
    spec = {"type": "similarity", "config": {"algorithm": algorithm, "threshold": 0.5}}
    same = grade(spec, output="北京是中国的首都", expected="北京是中国的首都")
    assert same.passed and same.score == 1.0
    far = grade(spec, output="completely different", expected="北京是中国的首都")
    assert not far.passed and far.score < 0.5 and algorithm in far.reason


def test_default_threshold_is_point_eight(grade):
    r = grade({"type": "similarity"}, output="abcdefghij", expected="abcdefghiX")
    assert r.score == pytest.approx(0.9) and r.passed
    r = grade({"type": "similarity"}, output="abcdefgh", expected="abcdeXYZ")
    assert r.score == pytest.approx(5 / 8) and not r.passed


def test_batch_matches_single(grade):
    from assay.core.sample import Sample

    pairs = [("北京", "北京"), ("abc", "abd"), ("", "x"), ("hello world", "world hello")]
    for algorithm in ("levenshtein", "cosine", "jaccard"):
        g = compile_spec({"type": "similarity", "config": {"algorithm": algorithm}}).build()
        batch = g.grade_batch([Sample(id=str(i), output=o, expected=e) for i, (o, e) in enumerate(pairs)])
        single = [g.grade(Sample(id="x", output=o, expected=e)) for o, e in pairs]
        assert [r.score for r in batch] == [r.score for r in single]


@pytest.mark.parametrize("config, message", [
    ({"threshold": 1.5}, r"config\.threshold: Input should be less than or equal to 1"),
    ({"threshold": -0.1}, r"config\.threshold"),
    ({"algorithm": "hamming"}, r"config\.algorithm: Input should be 'levenshtein', 'cosine' or 'jaccard'"),
    ({"algo": "cosine"}, r"config\.algo: unknown field"),
])
def test_invalid_config(config, message):
    with pytest.raises(SpecError, match=message):
        compile_spec({"type": "similarity", "config": config})


def test_levenshtein_batch_scores_are_exact_whatever_the_threshold():
    import random

    from rapidfuzz.distance import Levenshtein

    rng = random.Random(1)
    alphabet = "ab北京 "
    pairs = []
    for _ in range(300):
        a = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 80)))
        b = list(a)
        for _ in range(rng.randint(0, 40)):
            if b:
                b[rng.randrange(len(b))] = rng.choice(alphabet)
        pairs.append((a, "".join(b) + "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 5)))))
    from assay.core.sample import Sample
    samples = [Sample(id=str(i), output=a, expected=b) for i, (a, b) in enumerate(pairs)]
    for threshold in (0.0, 0.3, 0.8, 0.99, 1.0):
        g = compile_spec({"type": "similarity", "config": {"threshold": threshold}}).build()
        got = [r.score for r in g.grade_batch(samples)]
        assert got == [Levenshtein.normalized_similarity(a, b) for a, b in pairs]


# --- Bounds, normalisation, token-empty texts ------------------------------------------------

ALGORITHMS = ["levenshtein", "cosine", "jaccard"]


def _grade_pairs(config, pairs):
    from assay.core.sample import Sample

    g = compile_spec({"type": "similarity", "config": config}).build()
    return g.grade_batch([Sample(id=str(i), output=o, expected=e) for i, (o, e) in enumerate(pairs)])


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_megabyte_texts_are_refused_promptly(algorithm):
    import time

    big = "lorem ipsum dolor " * 60_000  # about 1 MB
    start = time.perf_counter()
    long_out, long_exp, fine = _grade_pairs({"algorithm": algorithm},
                                            [(big, big[::-1]), ("short", big), ("same text", "same text")])
    assert time.perf_counter() - start < 5  # unbounded, levenshtein takes about 40 s
    assert (long_out.status, long_out.error) == ("error", "invalid_output")
    assert long_out.reason == (f"output is {len(big):,} characters long; similarity compares at most "
                               "100,000 (config max_length)")
    assert long_exp.error == "invalid_output" and long_exp.reason.startswith("expected is 1,080,000 characters")
    assert fine.passed and fine.score == 1.0


def test_max_length_is_configurable():
    over, at = _grade_pairs({"max_length": 10}, [("a" * 11, "a"), ("a" * 10, "a" * 10)])
    assert over.error == "invalid_output" and "at most 10 (config max_length)" in over.reason
    assert at.passed
    with pytest.raises(SpecError, match=r"config\.max_length"):
        compile_spec({"type": "similarity", "config": {"max_length": 0}})


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_canonically_equal_texts_are_equal(algorithm):
    composed, decomposed = "café crème", "cafe\u0301 cre\u0300me"
    [r] = _grade_pairs({"algorithm": algorithm}, [(composed, decomposed)])
    assert r.passed and r.score == 1.0
    [r] = _grade_pairs({"algorithm": algorithm, "normalize": "none"}, [(composed, decomposed)])
    assert r.score < 1.0


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_nfkc_folds_compatibility_forms(algorithm):
    pair = ("ﬁne ①", "fine 1")
    [nfc] = _grade_pairs({"algorithm": algorithm}, [pair])
    [nfkc] = _grade_pairs({"algorithm": algorithm, "normalize": "NFKC"}, [pair])
    assert nfc.score < 1.0 and nfkc.score == 1.0


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("output, expected, score", [
    ("", "!!!", 0.0), ("!!!", "", 0.0), ("?!", "...", 0.0), ("", " ", 0.0),
    ("!!!", "!!!", 1.0), ("", "", 1.0), ("…", "…", 1.0),
])
def test_texts_without_tokens_are_equal_only_when_identical(algorithm, output, expected, score):
    batch = _grade_pairs({"algorithm": algorithm}, [(output, expected), ("x", "x")])
    single = _grade_pairs({"algorithm": algorithm}, [(output, expected)])
    assert batch[0].score == single[0].score == score
    assert batch[0].passed is (score == 1.0)


def test_values_that_are_not_text():
    deep: list = []
    for _ in range(300):  # past orjson's limit too
        deep = [deep]
    big_int, deep_r, mixed = _grade_pairs({}, [(2**80, str(2**80)), (deep, "x"), ({1: {2, 3}}, '{"1":[2,3]}')])
    assert big_int.passed
    assert (deep_r.status, deep_r.error) == ("error", "invalid_output") and "levels deep" in deep_r.reason
    assert mixed.passed


def test_levenshtein_pair_by_pair_and_cpdist_agree(monkeypatch):
    import random

    from assay.graders import similarity

    rng = random.Random(7)
    words = ["北京", "capital", "首都", "city", "the", "is", "😀", ""]
    outs = [" ".join(rng.choice(words) for _ in range(rng.randint(0, 12))) for _ in range(300)]
    exps = [o[::-1] if i % 3 else o + "x" for i, o in enumerate(outs)]
    small = similarity._levenshtein_many(outs, exps, 0.8)
    monkeypatch.setattr(similarity, "CPDIST_MIN", 0)
    assert similarity._levenshtein_many(outs, exps, 0.8) == small
