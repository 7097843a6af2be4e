import pytest

from assay.runner import ids as ids_module
from assay.runner.ids import IdHashes, first_duplicate


def hashes_of(values):
    h = IdHashes()
    for v in values:
        h.add(v)
    return h


def test_index_answers_membership_for_a_batch():
    index = hashes_of(f"s{i}" for i in range(1000)).index()
    assert len(index) == 1000
    assert index.contains(["s0", "s999", "s1000", "x", ""]) == [True, True, False, False, False]
    assert hashes_of([]).index().contains(["a"]) == [False]


def test_first_duplicate_names_both_lines_in_file_order():
    numbered = [(1, "a"), (2, "b"), (3, "c"), (4, "b"), (5, "a")]
    assert first_duplicate(lambda: iter(numbered), hashes_of(i for _, i in numbered)) == ("b", 2, 4)
    assert first_duplicate(lambda: iter(numbered[:3]), hashes_of(["a", "b", "c"])) is None


def test_ids_sharing_a_hash_are_told_apart_by_their_text(monkeypatch):
    monkeypatch.setattr(ids_module, "id_hash", lambda sample_id: 7)  # every id collides
    numbered = [(1, "a"), (2, "b"), (3, "c")]
    assert first_duplicate(lambda: iter(numbered), hashes_of(["a", "b", "c"])) is None
    numbered.append((4, "b"))
    assert first_duplicate(lambda: iter(numbered), hashes_of(["a", "b", "c", "b"])) == ("b", 2, 4)


@pytest.mark.parametrize("n", [1, 10, 5000, ids_module.SMALL + 1])
def test_an_index_costs_eight_bytes_an_id(n):
    index = hashes_of(f"id-{i}" for i in range(n)).index()
    hashes = index._hashes
    assert len(hashes) == n and hashes.itemsize == 8  # an array of int64, small (array) or large (numpy)


def test_small_and_large_indexes_answer_alike(monkeypatch):
    """Up to SMALL ids the index is searched in Python, past it with numpy: the same answers."""
    ids = [f"s{i}" for i in range(0, 3000, 3)] + ["s9", "s9"]
    asked = [f"s{i}" for i in range(-5, 3005)] + ["", "x"]
    small = hashes_of(ids)
    small_answers, small_repeated = small.index().contains(asked), small.repeated()
    monkeypatch.setattr(ids_module, "SMALL", 0)
    large = hashes_of(ids)
    assert large.index().contains(asked) == small_answers
    assert large.repeated() == small_repeated == {ids_module.id_hash("s9")}
    assert sum(small_answers) == 1000
