"""The JSON that assay's HTTP services accept in a request body: RFC 8259 and nothing more.

Both services (``assay serve``'s API and the sandbox service) read bodies from callers they
do not trust, so a body is refused, with a message saying what and where, when it is not
UTF-8, uses the ``NaN`` / ``Infinity`` literals, has a number no double can hold (``1e400``),
a lone surrogate escape (``"\\ud800"``, not a character), nesting deeper than 1,024 levels,
or an object with the same key twice (parsers disagree on which one wins, so a body that
depends on it is ambiguous). Integers are kept exact (``2**70`` stays an integer).
"""

from __future__ import annotations

import json
from typing import Any

import orjson

from assay.core.errors import AssayError

_HINTS = (
    ("depth limit", "nested more than 1,024 levels deep"),
    ("not valid UTF-8", "not UTF-8 text"),
    ("surrogate", "a lone surrogate escape (such as \\ud800) is not a character"),
    ("infinity when parsed", "a number too large for a double (such as 1e400)"),
    ("zero-length", "the body is empty"),
)


class StrictJsonError(AssayError, ValueError):
    """A body that is not strict JSON; ``str()`` says why and where."""


class _DuplicateKey(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def loads_strict(body: bytes | str) -> Any:
    """The value of ``body``, or StrictJsonError naming what is wrong and where."""
    try:
        orjson.loads(body)  # strict and fast: UTF-8, literals, doubles, surrogates, depth
    except orjson.JSONDecodeError as exc:
        raise StrictJsonError(_explain(exc, body)) from None
    try:
        # Parsed again for exact integers and to see every key of every object (orjson has
        # checked the bytes are UTF-8).
        return _DECODER.decode(body if isinstance(body, str) else body.decode("utf-8"))
    except _DuplicateKey as exc:
        raise StrictJsonError(f"the key {_short(exc.key)} appears twice in one object; send each key once") from None
    except (ValueError, RecursionError) as exc:  # e.g. an integer of more than 4,300 digits
        raise StrictJsonError(str(exc)[:200]) from None


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    value = dict(pairs)
    if len(value) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _DuplicateKey(key)
            seen.add(key)
    return value


_DECODER = json.JSONDecoder(object_pairs_hook=_unique_keys)  # built once: json.loads(**kw) builds one a call


def _explain(exc: orjson.JSONDecodeError, body: bytes | str) -> str:
    where = f" (line {exc.lineno}, column {exc.colno})"
    for needle, hint in _HINTS:
        if needle in exc.msg:
            return hint if needle == "zero-length" else hint + where
    text = body[exc.pos:exc.pos + 9] if isinstance(body, str) else body[exc.pos:exc.pos + 9].decode("utf-8", "replace")
    if text.lstrip("-").startswith(("NaN", "Infinity")):
        return "NaN and Infinity are not JSON; send null or a string" + where
    return f"not valid JSON: {exc.msg.split(':')[0]}{where}"


def _short(text: str, limit: int = 60) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "...")
