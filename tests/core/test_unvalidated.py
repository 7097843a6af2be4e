"""Models built without validation: their dicts share keys with their class's, in field order."""

import sys

from pydantic import BaseModel

from assay.core._unvalidated import shared_keys


def test_a_shared_keys_dict_keeps_the_order_it_was_given():
    class Pair(BaseModel):
        a: int = 0
        b: int = 0

    first = shared_keys(Pair, {"b": 2, "a": 1})
    assert list(first.items()) == [("b", 2), ("a", 1)]
    copy = first.copy()
    copy["a"] = 5
    assert list(copy.items()) == [("b", 2), ("a", 5)] and first["a"] == 1
    again = shared_keys(Pair, {"a": 3, "b": 4})  # keys shared with the first, in this order
    assert list(again.items()) == [("a", 3), ("b", 4)]


def test_a_shared_keys_copy_is_smaller_on_cpython():
    class Wide(BaseModel):
        f0: int = 0
        f1: int = 0
        f2: int = 0
        f3: int = 0
        f4: int = 0
        f5: int = 0
        f6: int = 0
        f7: int = 0
        f8: int = 0
        f9: int = 0
        f10: int = 0

    fields = {f"f{i}": i for i in range(11)}
    shared = shared_keys(Wide, fields)
    assert shared == fields and list(shared) == list(fields)
    if sys.implementation.name == "cpython":
        assert sys.getsizeof(shared.copy()) < sys.getsizeof(fields.copy())
