"""Compile JavaScript-style patterns to a linear-time engine (RE2) where the pattern allows,
and to a time-bounded backtracking engine where it needs backreferences or lookaround."""

from __future__ import annotations

import os
import re
import threading
from contextlib import contextmanager
from dataclasses import dataclass

import re2
import regex

JS_FLAGS = frozenset("imsugy")
_INLINE = {"i": "i", "m": "m", "s": "s"}
_ESCAPES = re.compile(r"\\\\|\\u\{([0-9a-fA-F]{1,6})\}|\\u([0-9a-fA-F]{4})")
_UNANCHORED = re2._Anchor.UNANCHORED if hasattr(re2, "_Anchor") else None
# Characters in a UTF-8 byte range, counted in C (RE2 reports byte offsets).
_char_len = getattr(re2._re2, "BytesToCharLen", None) or (lambda data, lo, hi: len(data[lo:hi].decode()))

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


class PatternError(ValueError):
    """A pattern or its flags cannot be compiled."""


def check_flags(flags: str) -> str:
    bad = sorted(set(flags) - JS_FLAGS)
    if bad:
        raise PatternError(f"unknown flag(s) {''.join(bad)!r}; allowed: i m s u g y")
    dupes = sorted({f for f in flags if flags.count(f) > 1})
    if dupes:
        raise PatternError(f"flag(s) {''.join(dupes)!r} given twice")
    return flags


def _js_to_re2_syntax(pattern: str) -> str:
    """Translate JavaScript escapes RE2 spells differently (``\\uXXXX``, ``\\u{X}``)."""
    def sub(m: re.Match[str]) -> str:
        if m.group(0) == "\\\\":
            return m.group(0)
        return "\\x{" + (m.group(1) or m.group(2)) + "}"
    return _ESCAPES.sub(sub, pattern)


@dataclass(slots=True)
class Match:
    start: int
    end: int
    text: str


class CompiledPattern:
    """A pattern ready to search. ``engine`` is ``re2`` (linear time) or ``backtracking``."""

    __slots__ = ("source", "flags", "engine", "_re2", "_raw", "_bt", "timeout_s")

    def __init__(self, source: str, flags: str = "", *, timeout_s: float = 0.1) -> None:
        self.source = source
        self.flags = check_flags(flags)
        self.timeout_s = timeout_s
        inline = "".join(_INLINE[f] for f in flags if f in _INLINE)
        prefix = f"(?{inline})" if inline else ""
        self._re2 = self._bt = self._raw = None
        try:
            with _quiet_stderr():
                self._re2 = re2.compile(prefix + _js_to_re2_syntax(source))
            self._raw = getattr(self._re2, "_regexp", None)
            self.engine = "re2"
        except re2.error:
            try:
                self._bt = regex.compile(prefix + source, regex.V0)
            except regex.error as exc:
                raise PatternError(f"invalid regular expression: {exc}") from None
            self.engine = "backtracking"

    def test(self, text: str) -> bool:
        """True when the pattern matches anywhere. May raise TimeoutError (backtracking only)."""
        raw = self._raw
        if raw is not None:
            data = text.encode()
            return raw.Match(_UNANCHORED, data, 0, len(data))[0][0] != -1
        return self.search(text) is not None

    def search_many(self, texts: list[str]) -> list[Match | None]:
        """``search`` over many texts in one loop: the vectorised path of the regex grader.
        May raise TimeoutError (backtracking engine only)."""
        raw = self._raw
        if raw is None:
            return [self.search(t) for t in texts]
        match, anchor, char_len = raw.Match, _UNANCHORED, _char_len
        out: list[Match | None] = []
        for text in texts:
            data = text.encode()
            start, end = match(anchor, data, 0, len(data))[0]
            if start == -1:
                out.append(None)
            else:
                found = data[start:end].decode()
                offset = char_len(data, 0, start) if start else 0
                out.append(Match(offset, offset + len(found), found))
        return out

    def search(self, text: str) -> Match | None:
        """The first match with its character span. May raise TimeoutError (backtracking only)."""
        raw = self._raw
        if raw is not None:
            data = text.encode()
            start, end = raw.Match(_UNANCHORED, data, 0, len(data))[0]
            if start == -1:
                return None
            found = data[start:end].decode()
            offset = _char_len(data, 0, start) if start else 0
            return Match(offset, offset + len(found), found)
        if self._re2 is not None:
            m = self._re2.search(text)
        else:
            m = self._bt.search(text, timeout=self.timeout_s)
        if m is None:
            return None
        return Match(m.start(), m.end(), m.group(0))
