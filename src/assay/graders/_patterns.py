"""Compile JavaScript-style patterns to a linear-time engine (RE2) where the pattern allows,
and to a time-bounded backtracking engine where it needs backreferences or lookaround.

Errors name positions in the pattern as the user wrote it, whatever was added or translated
before compiling (flag prefixes, anchors, ``\\u{...}`` escapes).
"""

from __future__ import annotations

import os
import re
import threading
import time
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import re2

if TYPE_CHECKING:  # the backtracking engine is imported by the first pattern that needs it
    import regex

from assay.core.errors import AssayError
from assay.core.messages import Phrase
from assay.core.untrusted import clean_text
from assay.graders._regex_words import problem

JS_FLAGS = frozenset("imsugy")
_INLINE = {"i": "i", "m": "m", "s": "s"}
_BT_FLAGS = {"i": "IGNORECASE", "m": "MULTILINE", "s": "DOTALL"}
_ESCAPES = re.compile(r"\\\\|\\u\{([0-9a-fA-F]{1,6})\}|\\u([0-9a-fA-F]{4})")
_SURROGATE = re.compile("[\ud800-\udfff]")
_UNANCHORED = re2._Anchor.UNANCHORED if hasattr(re2, "_Anchor") else None
# Characters in a UTF-8 byte range, counted in C (RE2 reports byte offsets).
_char_len = getattr(re2._re2, "BytesToCharLen", None) or (lambda data, lo, hi: len(data[lo:hi].decode()))

MAX_PATTERN_LENGTH = 10_000
"""Longest pattern accepted, in characters. RE2 is linear in the text, but when its DFA cache
fills (long patterns) it falls back to a simulation costing text length × pattern length."""
MAX_UNROLLED = 200_000
"""Most pattern steps the backtracking engine's compiler may unroll counted repeats into:
``((a{1000}){1000}){1000}`` would take it minutes and gigabytes before a search begins."""

_stderr_lock = threading.Lock()


@contextmanager
def _quiet_stderr():
    """RE2 logs each pattern it rejects straight to fd 2; the rejection is reported by us."""
    with _stderr_lock:
        saved = os.dup(2)
        devnull = os.open(os.devnull, os.O_WRONLY)
        try:
            os.dup2(devnull, 2)
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
            os.close(devnull)


class PatternError(AssayError, ValueError):
    """A pattern or its flags cannot be compiled (``args[0]``: what is wrong, often a phrase)."""


UNKNOWN_FLAGS = Phrase("regex.unknown_flags", "unknown flag(s) {flags}; allowed: i m s u g y")
TWICE = Phrase("regex.flags_twice", "flag(s) {flags} given twice")
INVALID = Phrase("regex.invalid", "invalid regular expression: {problem}")
INVALID_AT = Phrase("regex.invalid_at", "invalid regular expression: {problem} at position {at}")
INVALID_NEAR = Phrase("regex.invalid_near", "invalid regular expression: {problem} at position {at} (near {near})")


def check_flags(flags: str) -> str:
    bad = sorted(set(flags) - JS_FLAGS)
    if bad:
        raise PatternError(UNKNOWN_FLAGS(flags=repr("".join(bad))))
    dupes = sorted({f for f in flags if flags.count(f) > 1})
    if dupes:
        raise PatternError(TWICE(flags=repr("".join(dupes))))
    return flags


def _translate(pattern: str, spell: Callable[[str], str]) -> tuple[str, Callable[[int], int]]:
    """Rewrite JavaScript's ``\\uXXXX`` and ``\\u{X}`` escapes with ``spell(hex digits)``.

    Returns the new pattern and a function taking a position in it back to the position in
    ``pattern`` (a position inside a rewritten escape maps to the escape's start).
    """
    parts: list[str] = []
    moves: list[tuple[int, int, int, int]] = []  # (start, end) in the new pattern, then in the old
    last = shift = 0
    for m in _ESCAPES.finditer(pattern):
        if m.group(0) == "\\\\":
            continue
        new = spell(m.group(1) or m.group(2))
        parts += (pattern[last:m.start()], new)
        start = m.start() + shift
        moves.append((start, start + len(new), m.start(), m.end()))
        shift += len(new) - (m.end() - m.start())
        last = m.end()
    parts.append(pattern[last:])

    def where(pos: int) -> int:
        moved = 0  # how far positions after the escapes passed so far have moved
        for new_start, new_end, old_start, old_end in moves:
            if pos < new_start:
                break
            if pos < new_end:
                return old_start
            moved = new_end - old_end
        return pos - moved

    return "".join(parts), where


def _unrolled_size(pattern: str, cap: int = MAX_UNROLLED) -> int:
    """About how many steps the backtracking compiler makes of ``pattern``: each item counts
    once per repeat its ``{m}`` / ``{m,n}`` quantifiers (and those of enclosing groups) demand,
    since the compiler writes out the ``m`` required copies. Stops counting past ``cap``."""
    frames = [0]  # size so far of each open group
    last = 0      # size of the item a following quantifier repeats
    i, n = 0, len(pattern)
    while i < n and frames[0] <= cap:
        c = pattern[i]
        if c == "(":
            frames.append(0)
            i += 1
            last = 0
            continue
        if c == ")" and len(frames) > 1:
            last = frames.pop()
            frames[-1] += last
            i += 1
            continue
        if c == "{":
            m = _COUNT.match(pattern, i)
            if m:
                digits = m.group(1)
                times = cap + 1 if len(digits) > 9 else int(digits or 0)
                frames[-1] += last * (max(times, 1) - 1)
                last = min(last * max(times, 1), cap + 1)
                frames[-1] = min(frames[-1], cap + 1)
                i = m.end()
                continue
        if c == "\\":
            m = _BRACED_ESCAPE.match(pattern, i)
            i = m.end() if m else i + 2
        elif c == "[":
            i = _class_end(pattern, i)
        else:
            i += 1
        frames[-1] += 1
        last = 1
    return sum(frames)


_COUNT = re.compile(r"\{(\d*)(?:,\d*)?\}")
_BRACED_ESCAPE = re.compile(r"\\[pPNxug]\{[^}]*\}")


def _class_end(pattern: str, i: int) -> int:
    """Index just past the character class opening at ``pattern[i]``."""
    j = i + 1
    if j < len(pattern) and pattern[j] == "^":
        j += 1
    if j < len(pattern) and pattern[j] == "]":
        j += 1
    while j < len(pattern) and pattern[j] != "]":
        j += 2 if pattern[j] == "\\" else 1
    return j + 1


def _utf8(text: str) -> bytes:
    try:
        return text.encode()
    except UnicodeEncodeError:  # lone surrogates: not characters, matched as U+FFFD
        return clean_text(text).encode()


@dataclass(slots=True)
class Match:
    start: int
    end: int
    text: str


class CompiledPattern:
    """A pattern ready to search. ``engine`` is ``re2`` (linear time) or ``backtracking``.

    ``anchored`` patterns must match the whole text. ``source`` is the pattern as given.
    """

    __slots__ = ("source", "flags", "engine", "_re2", "_raw", "_bt", "timeout_s")

    def __init__(self, source: str, flags: str = "", *, timeout_s: float = 0.1, anchored: bool = False) -> None:
        self.source = source
        self.flags = check_flags(flags)
        self.timeout_s = timeout_s
        if len(source) > MAX_PATTERN_LENGTH:
            raise PatternError(f"pattern is {len(source):,} characters long; at most {MAX_PATTERN_LENGTH:,} "
                               "are accepted")
        bad = _SURROGATE.search(source)
        if bad:
            raise PatternError(f"invalid regular expression: lone surrogate U+{ord(bad.group()):04X} at "
                               f"position {bad.start()} (not a character; write a pair, or \\u{{...}})")
        head, tail = ("^(?:", ")$") if anchored else ("", "")
        inline = "".join(_INLINE[f] for f in flags if f in _INLINE)
        prefix = (f"(?{inline})" if inline else "") + head
        self._re2: Any = None  # a google-re2 pattern (the module is untyped)
        self._raw: Any = None  # its C++ object, when this google-re2 exposes it
        self._bt: regex.Pattern[str] | None = None
        try:
            with _quiet_stderr():
                self._re2 = re2.compile(prefix + _translate(source, lambda h: "\\x{" + h + "}")[0] + tail)
            self._raw = getattr(self._re2, "_regexp", None)
            self.engine = "re2"
            return
        except re2.error:
            pass
        translated, where = _translate(source, lambda h: f"\\U{int(h, 16):08x}")
        if _unrolled_size(translated) > MAX_UNROLLED:
            raise PatternError(f"pattern's counted repeats ({{n}}) unroll to more than {MAX_UNROLLED:,} steps "
                               "for the backtracking engine (needed for backreferences and lookaround); "
                               "use smaller counts")
        import regex

        bt_flags = regex.V0
        for f in flags:
            bt_flags |= getattr(regex, _BT_FLAGS[f]) if f in _BT_FLAGS else 0
        try:
            self._bt = regex.compile(head + translated + tail, bt_flags)
        except regex.error as exc:
            raise _syntax_error(exc, source, lambda pos: where(pos - len(head))) from None
        self.engine = "backtracking"

    @property
    def re2_source(self) -> str | None:
        """The pattern exactly as given to RE2 (flags as an inline prefix, ``\\u{...}``
        escapes translated), or None when it runs on the backtracking engine."""
        source = getattr(self._re2, "pattern", None) if self.engine == "re2" else None
        return source if isinstance(source, str) else None

    def test(self, text: str, deadline: float | None = None) -> bool:
        """True when the pattern matches anywhere. With ``deadline`` (a ``time.monotonic()``
        value) the search must end by then, else TimeoutError; without, the backtracking engine
        gets ``timeout_s``. RE2 needs no bound (linear time) but still honours a passed deadline."""
        raw = self._raw
        if deadline is not None and deadline <= time.monotonic():
            raise TimeoutError
        if raw is not None:
            data = _utf8(text)
            return raw.Match(_UNANCHORED, data, 0, len(data))[0][0] != -1
        return self.search(text, deadline) is not None

    def search_many(self, texts: list[str]) -> list[Match | None]:
        """``search`` over many texts in one loop: the vectorised path of the regex grader.
        May raise TimeoutError (backtracking engine only)."""
        raw = self._raw
        if raw is None:
            return [self.search(t) for t in texts]
        match, anchor, char_len = raw.Match, _UNANCHORED, _char_len
        out: list[Match | None] = []
        for text in texts:
            data = _utf8(text)
            start, end = match(anchor, data, 0, len(data))[0]
            if start == -1:
                out.append(None)
            else:
                found = data[start:end].decode()
                offset = char_len(data, 0, start) if start else 0
                out.append(Match(offset, offset + len(found), found))
        return out

    def search(self, text: str, deadline: float | None = None) -> Match | None:
        """The first match with its character span. May raise TimeoutError (backtracking only,
        or past ``deadline``; see ``test``)."""
        raw = self._raw
        if raw is not None:
            data = _utf8(text)
            start, end = raw.Match(_UNANCHORED, data, 0, len(data))[0]
            if start == -1:
                return None
            found = data[start:end].decode()
            offset = _char_len(data, 0, start) if start else 0
            return Match(offset, offset + len(found), found)
        if self._re2 is not None:  # a google-re2 without the raw interface used above
            m = self._re2.search(_utf8(text).decode())
        else:
            bt = self._bt
            assert bt is not None  # __init__ compiles with one engine or raises
            timeout = self.timeout_s if deadline is None else deadline - time.monotonic()
            if timeout <= 0:
                raise TimeoutError
            m = bt.search(text, timeout=timeout)
        if m is None:
            return None
        return Match(m.start(), m.end(), m.group(0))


def _syntax_error(exc: regex.error, source: str, where: Callable[[int], int]) -> PatternError:
    """The backtracking engine's complaint, placed in the pattern the user wrote."""
    message = problem(getattr(exc, "msg", None) or str(exc))
    pos: int | None = getattr(exc, "pos", None)  # set by regex at run time; its stubs leave it out
    if pos is None:
        return PatternError(INVALID(problem=message))
    at = min(max(where(pos), 0), len(source))
    if len(source) > 30:
        return PatternError(INVALID_NEAR(problem=message, at=at, near=repr(source[max(0, at - 15):at + 15])))
    return PatternError(INVALID_AT(problem=message, at=at))
