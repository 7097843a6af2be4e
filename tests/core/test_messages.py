"""core.messages: phrases say English text that carries its code and values; results keep
them beside the text; what comes from elsewhere is rebuilt only when it fits a known phrase."""

from __future__ import annotations

import pickle

import pytest

from assay.core import messages
from assay.core.messages import Phrase, Said, code_and_args, in_turn, rebuilt
from assay.core.result import Status, copier, make_result

LOOKS: Phrase
BARE: Phrase  # both set by the fixture


@pytest.fixture(autouse=True)
def test_phrases():
    """Two phrases for these tests, out of the registry again after each (the catalogue test
    reads every phrase the registry holds)."""
    global LOOKS, BARE
    LOOKS, BARE = Phrase("test.looks", "{who} looks at {what}"), Phrase("test.bare", "nothing to say")
    yield
    del messages._REGISTRY["test.looks"], messages._REGISTRY["test.bare"]


def test_a_phrase_says_english_that_carries_its_code_and_values():
    said = LOOKS(who="{what}", what=BARE())
    assert said == "{what} looks at nothing to say"  # filled in one pass: a value is never filled again
    assert isinstance(said, str) and said.code == "test.looks"
    assert said.args == {"who": "{what}", "what": {"code": "test.bare", "args": {}}}
    assert type(said + "!") is str and code_and_args(said + "!") == (None, None)
    again = pickle.loads(pickle.dumps(said))
    assert (again, again.code, again.args) == (said, said.code, said.args)


def test_a_phrase_takes_exactly_its_values_and_a_code_has_one_text():
    with pytest.raises(TypeError, match="takes"):
        LOOKS(who="x")
    with pytest.raises(ValueError, match="defined twice"):
        Phrase("test.looks", "another text")
    with pytest.raises(ValueError, match="dotted"):
        Phrase("Looks", "x")
    assert Phrase("test.looks", "{who} looks at {what}").code == "test.looks"  # the same twice is fine


def test_several_phrases_in_turn():
    both = in_turn([BARE(), LOOKS(who="a", what="b")])
    assert both == "nothing to say; a looks at b" and both.code == "list.items"
    assert in_turn([BARE()]) is not None and in_turn([BARE()]).code == "test.bare"


def test_results_keep_the_code_beside_plain_text():
    said = LOOKS(who="a", what="b")
    result = make_result("g", "t", "code", Status.FAILED, False, 0.0, said, {}, None, 1.0)
    assert type(result.reason) is str and result.reason == "a looks at b"
    assert (result.reason_code, result.reason_args) == ("test.looks", {"who": "a", "what": "b"})
    copy = copier(result)(BARE())
    assert (copy.reason, copy.reason_code, copy.reason_args) == ("nothing to say", "test.bare", {})
    plain = copier(result)("my own words")
    assert (plain.reason, plain.reason_code, plain.reason_args) == ("my own words", None, None)


@pytest.mark.parametrize(("code", "args"), [
    ("test.nope", {}),  # unknown
    ("test.looks", {"who": "a"}),  # a value missing
    ("test.looks", {"who": "a", "what": "b", "extra": 1}),
    ("test.looks", {"who": ["a"], "what": "b"}),  # not a scalar
    ("test.looks", {"who": "a", "what": {"code": "test.nope", "args": {}}}),  # a forged nested code
    ("list.items", {"items": [{"code": "test.bare", "args": {}}, "x"]}),
    (3, {}),
])
def test_what_comes_from_elsewhere_is_rebuilt_only_when_it_fits(code, args):
    assert rebuilt(code, args) is None


def test_a_received_phrase_is_said_again_here():
    said = rebuilt("list.items", {"items": [{"code": "test.bare", "args": {}},
                                            {"code": "test.looks", "args": {"who": "a", "what": {"code": "test.bare",
                                                                                                "args": {}}}}]})
    assert isinstance(said, Said) and said == "nothing to say; a looks at nothing to say"
