"""core.problems: every kind of error pydantic v2 can raise has a phrase whose values its
context gives, and a problem without one is still said inside a phrase (the field named by
its path, the pages' words around pydantic's)."""

from __future__ import annotations

import pytest
from pydantic import BaseModel, Field, ValidationError, field_validator
from pydantic_core import _pydantic_core

from assay.core import problems
from assay.core.errors import SpecError
from assay.core.messages import code_and_args, placeholders

KINDS = {e["type"]: e["message_template_python"] for e in _pydantic_core.list_all_errors()}


def test_every_kind_pydantic_can_raise_has_a_phrase():
    own = {"extra_forbidden", "value_error"}  # said by UNKNOWN_FIELD, and by the validator's own phrase
    assert set(KINDS) - own == set(problems._BY_TYPE), "a kind pydantic has (or lost) is not listed"


@pytest.mark.parametrize("kind", sorted(problems._BY_TYPE))
def test_each_phrase_takes_values_its_kind_gives(kind):
    """A phrase's placeholders are among the kind's own (pydantic fills its context with them)."""
    assert problems._BY_TYPE[kind].names <= placeholders(KINDS[kind]), KINDS[kind]


class Model(BaseModel):
    ratio: float = Field(ge=0, le=1)
    name: str = Field(max_length=3)
    when: int = 0

    @field_validator("when")
    @classmethod
    def _plain(cls, value: int) -> int:
        if value < 0:
            raise ValueError("must not be negative")
        return value


def _problems(**values):
    with pytest.raises(ValidationError) as caught:
        Model.model_validate(values)
    return {e["loc"][0]: problems.field_problem(e) for e in caught.value.errors()}


def test_pydantic_text_is_kept_and_the_phrase_carries_its_context():
    got = _problems(ratio=2, name="abcd")
    assert got["ratio"] == "Input should be less than or equal to 1"
    assert code_and_args(got["ratio"]) == ("problem.less_than_equal", {"le": 1})
    assert code_and_args(got["name"]) == ("problem.string_too_long", {"max_length": 3})


def test_a_problem_without_a_phrase_is_still_said_by_one():
    got = _problems(ratio=0, name="a", when=-1)["when"]
    assert got == "must not be negative" and code_and_args(got) == ("problem.other", {"message": got})
    with pytest.raises(ValidationError) as caught:
        Model.model_validate({"ratio": 0, "name": "a", "when": -1})
    said = SpecError.from_validation(caught.value).message  # named by its field path, as every problem is
    assert code_and_args(said)[1] == {"path": "when", "problem": {
        "code": "problem.other", "args": {"message": "must not be negative"}}}
