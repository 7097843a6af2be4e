"""Pydantic models built without validation, for values already known to be what validation
would produce: the hot paths of a batch (``make_result``, ``copier``, ``trusted_samples``).

Such an instance is what ``model_validate`` leaves: ``__dict__`` holding every field in
declaration order, the set of fields given, no extra fields, no private attributes; ``build``
makes one.
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

M = TypeVar("M", bound=BaseModel)

new = object.__new__
set_attr = object.__setattr__  # used as set_attr(obj, "__dict__", fields)
# BaseModel's own slots, set through their descriptors: the same effect as model_construct
# without its per-field work.
set_fields_set = BaseModel.__dict__["__pydantic_fields_set__"].__set__
set_extra = BaseModel.__dict__["__pydantic_extra__"].__set__
set_private = BaseModel.__dict__["__pydantic_private__"].__set__


def build(cls: type[M], fields: dict[str, Any], fields_set: set[str]) -> M:
    """An instance of ``cls`` holding ``fields`` (every field, in declaration order), as
    ``model_validate`` would leave it, with ``fields_set`` as the fields given (shared: a set
    pydantic only ever adds to, or never changes for a frozen model)."""
    obj = new(cls)
    set_attr(obj, "__dict__", fields)
    set_fields_set(obj, fields_set)
    set_extra(obj, None)
    set_private(obj, None)
    return obj


def shared_keys(cls: type[BaseModel], fields: dict[str, Any]) -> dict[str, Any]:
    """A copy of ``fields`` whose copies share their keys with ``cls``'s other instance dicts.

    CPython keeps one key table per class for instance dicts filled attribute by attribute:
    a copy of such a dict holds only the values (measured for GraderResult: 288 bytes against
    464, about a fifth faster to make). Each such dict keeps its own key order; ``fields``
    itself comes back should this one not (field order shows in ``repr`` and dumps).
    """
    obj = new(cls)
    for name, value in fields.items():
        set_attr(obj, name, value)
    shared = obj.__dict__
    return shared if list(shared) == list(fields) else fields
