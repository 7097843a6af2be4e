"""JSON Lines and ``.json`` datasets, parsed exactly.

orjson parses each line (fast). The few lines it cannot take exactly go to the standard
library instead: orjson rounds integers beyond 64 bits to floats and refuses ``"\\ud800"``
escapes, which JSON allows (they become U+FFFD here). NaN and Infinity are not JSON and are
refused with a message, as is nesting deeper than the parsers go (about 1,000 levels).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from assay.core.errors import AssayError, SpecError
from assay.runner.dataset._text import blocks, check_start, line_of, read, utf8

Rows = Iterator[tuple[int, Any]]

# An integer of 19 digits may be beyond int64; a line with one is parsed again exactly. It is
# found by mapping digits to "0", "." to itself and all else to " " (much faster than a regular
# expression): a fraction's digits follow a "." and are left alone. Digits in a string may
# match too, which is only slower.
_DIGITS_AS_ZERO = bytes(0x30 if 0x30 <= b <= 0x39 else b if b == 0x2E else 0x20 for b in range(256))
_LONG_INT = b" " + b"0" * 19
# An escaped backslash is consumed first so that `\\ud800` (a backslash, then text) stays.
_SURROGATE_ESCAPE = re.compile(r"(?P<keep>\\\\|\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2})"
                               r"|\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_WS = re.compile(r"[ \t\r\n]*")
_TOO_DEEP = "nested too deeply (about 1,000 levels at most)"


def _skip_ws(text: str, pos: int) -> int:
    """The position after the JSON whitespace at ``pos`` (``_WS`` matches the empty string too)."""
    m = _WS.match(text, pos)
    return m.end() if m else pos


class BadJson(AssayError, ValueError):
    """Text that is not one JSON value; the message says why (with the column when known)."""

    def __init__(self, message: str, *, cut_short: bool = False) -> None:
        super().__init__(message)
        self.cut_short = cut_short
        """The text ended inside the value (a JSONL row spread over several lines, say)."""


def parse_json(raw: bytes, *, exact: bool = True) -> Any:
    """One JSON value, integers exact and lone surrogates as U+FFFD.

    ``exact=False`` says that ``raw`` has no integer of 19 digits or more (the caller has looked).
    Raises BadJson, or UnicodeDecodeError for bytes that are not UTF-8.
    """
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        if "depth limit" in exc.msg:
            raise BadJson(_TOO_DEEP) from None
        return _parse_exact(raw.decode("utf-8"))
    if exact and _has_long_int(raw):
        return _parse_exact(raw.decode("utf-8"))
    return value


def _has_long_int(raw: bytes) -> bool:
    return _LONG_INT in raw.translate(_DIGITS_AS_ZERO)


def jsonl_rows(fh: BinaryIO, path: Path) -> Rows:
    for first, chunk in blocks(fh, path):
        maybe_long = _has_long_int(chunk)  # one pass over the block; rarely true
        for line_no, line in enumerate(chunk.split(b"\n"), first):
            if not line or line.isspace():
                continue
            try:
                yield line_no, parse_json(line, exact=maybe_long)
            except BadJson as exc:
                hint = "; the line ends inside the row: a JSONL row is one object on one line" if exc.cut_short else ""
                raise SpecError(f"{exc}{hint}", where=f"{path}:{line_no}") from None
            except UnicodeDecodeError:
                utf8(line, f"{path}:{line_no}")
                raise


def json_rows(fh: BinaryIO, path: Path) -> Rows:
    """The rows of a ``.json`` file (a list of objects), each with the line it starts on."""
    raw = check_start(read(fh.read, -1, path), path)
    try:
        text = _without_lone_surrogates(raw.decode("utf-8"))
    except UnicodeDecodeError as exc:
        start, end = raw.rfind(b"\n", 0, exc.start) + 1, raw.find(b"\n", exc.start)
        utf8(raw[start:end if end >= 0 else len(raw)], f"{path}:{line_of(raw, exc.start)}")
        raise
    pos = _skip_ws(text, 0)
    if pos == len(text):
        return
    if text[pos] != "[":
        raise SpecError("a .json dataset must be a list of rows, `[{...}, {...}]`; for one object per line "
                        "name the file .jsonl", where=f"{path}:{line_of(text, pos)}")
    pos = _skip_ws(text, pos + 1)
    line, counted = 1, 0
    while not text.startswith("]", pos):
        line += text.count("\n", counted, pos)
        counted = pos
        row, pos = _decode_at(text, pos, path, line)
        yield line, row
        pos = _skip_ws(text, pos)
        if text.startswith(",", pos):
            pos = _skip_ws(text, pos + 1)
            if text.startswith("]", pos):
                raise SpecError("a `,` before the closing `]` is not JSON", where=f"{path}:{line_of(text, pos)}")
        elif not text.startswith("]", pos):
            raise SpecError("expected `,` or `]` after a row", where=f"{path}:{line_of(text, pos)}")
    end = _skip_ws(text, pos + 1)
    if end != len(text):
        raise SpecError("text after the `]` that closes the list of rows", where=f"{path}:{line_of(text, end)}")


def _decode_at(text: str, pos: int, path: Path, line: int) -> tuple[Any, int]:
    try:
        return _decoder.raw_decode(text, pos)
    except json.JSONDecodeError as exc:
        raise SpecError(_explain(exc), where=f"{path}:{exc.lineno}") from None
    except _NotJson as exc:
        raise SpecError(str(exc), where=f"{path}:{line}") from None
    except RecursionError:
        raise SpecError(_TOO_DEEP, where=f"{path}:{line}") from None


def _parse_exact(text: str) -> Any:
    try:
        return _decoder.decode(_without_lone_surrogates(text))
    except json.JSONDecodeError as exc:
        raise BadJson(_explain(exc), cut_short=exc.pos >= len(exc.doc.rstrip())) from None
    except _NotJson as exc:
        raise BadJson(str(exc)) from None
    except RecursionError:
        raise BadJson(_TOO_DEEP) from None


def _without_lone_surrogates(text: str) -> str:
    """JSON text whose ``\\ud800``-style escapes that are not half of a pair read ``\\ufffd``
    (the same length, so offsets and lines stay put)."""
    if "\\u" not in text:
        return text
    return _SURROGATE_ESCAPE.sub(lambda m: m.group("keep") or "\\ufffd", text)


def _explain(exc: json.JSONDecodeError) -> str:
    return f"invalid JSON at column {exc.colno}: {exc.msg}"


class _NotJson(ValueError):
    """A value the standard library reads but JSON does not allow."""


def _no_constant(literal: str) -> Any:
    raise _NotJson(f"{literal} is not JSON; write null or a string such as \"{literal}\"")


def _finite(literal: str) -> float:
    value = float(literal)
    if not math.isfinite(value):
        raise _NotJson(f"the number {literal[:40]} is too large for a float; write it as a string")
    return value


def _integer(literal: str) -> int | str:
    """An integer, exact; past Python's 4,300-digit conversion limit, its exact text (as every
    integer past 64 bits becomes when it is kept, see core.untrusted)."""
    digits = len(literal) - (literal[0] == "-")
    return int(literal) if digits <= _MAX_INT_DIGITS else literal


_MAX_INT_DIGITS = 4000
_decoder = json.JSONDecoder(parse_constant=_no_constant, parse_float=_finite, parse_int=_integer)
