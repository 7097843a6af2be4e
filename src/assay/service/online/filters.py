"""Online rules' filters: a small expression over a span's attributes, parsed once when the rule
is saved (a mistake is reported with its position) and evaluated on every span that arrives.

    gen_ai.operation.name == "chat" and gen_ai.request.model in ["gpt-4o", "gpt-4o-mini"]
    not span.status == "error" or span.duration_ms > 2000
    resource.service.name startswith "checkout" and gen_ai.output.messages

A name is an attribute's key; ``resource.KEY`` is a resource attribute; ``span.name``,
``span.kind``, ``span.status`` (``unset``, ``ok``, ``error``) and ``span.duration_ms`` are the
span's own. A name alone is true when the attribute is present and not empty, false or zero.
Operators: ``== != < <= > >=``, ``in [..]``, ``contains``, ``startswith``, ``and``, ``or``,
``not``, parentheses; values are "text", 'text', numbers, ``true``, ``false``, ``null``. No
regular expressions: a filter runs on every span and must stay cheap.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from assay.core.errors import AssayError
from assay.core.messages import Phrase

MAX_CHARS = 2000
MAX_DEPTH = 32
STATUS = {0: "unset", 1: "ok", 2: "error"}
KINDS = {0: "unspecified", 1: "internal", 2: "server", 3: "client", 4: "producer", 5: "consumer"}

EXPECTED = Phrase("filter.expected", "at position {position}: expected {what}, found {found}")
TOO_LONG = Phrase("filter.too_long", "longer than {limit} characters")
TOO_DEEP = Phrase("filter.too_deep", "at position {position}: nested deeper than {limit} levels")


class FilterError(AssayError, ValueError):
    def __init__(self, message: str, position: int) -> None:
        super().__init__(message)
        self.said = message
        """The phrase said (its code and arguments travel with it to the pages)."""
        self.position = position


class Filtered(Protocol):
    name: str
    kind: int
    status_code: int
    start_ns: int
    end_ns: int
    attributes: dict[str, Any]
    resource: dict[str, Any]


Predicate = Callable[[Filtered], bool]
Getter = Callable[[Filtered], Any]

_TOKEN = re.compile(r"""\s*(?:(?P<number>-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)(?![\w.])
    |(?P<string>"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')
    |(?P<op>==|!=|<=|>=|<|>|\(|\)|\[|\]|,)
    |(?P<name>[A-Za-z_][\w.\-]*))""", re.VERBOSE)
_WORDS = {"and", "or", "not", "in", "contains", "startswith", "true", "false", "null"}


@dataclass(frozen=True, slots=True)
class _Token:
    kind: str
    text: str
    position: int


def _tokens(text: str) -> list[_Token]:
    out: list[_Token] = []
    at = 0
    while at < len(text):
        if text[at:].strip() == "":
            break
        match = _TOKEN.match(text, at)
        if match is None or match.end() == at:
            start = at + len(text[at:]) - len(text[at:].lstrip())
            raise FilterError(EXPECTED(position=start + 1, what="a name, a value or an operator",
                                       found=repr(text[start:start + 10])), start + 1)
        kind = match.lastgroup or ""
        value, position = match.group(kind), match.start(kind) + 1
        if kind == "name" and value in _WORDS:
            kind = "word"
        out.append(_Token(kind, value, position))
        at = match.end()
    out.append(_Token("end", "", len(text) + 1))
    return out


def parse(text: str) -> Predicate:
    """The predicate of ``text``; an empty filter takes every span. Raises FilterError."""
    if len(text) > MAX_CHARS:
        raise FilterError(TOO_LONG(limit=MAX_CHARS), MAX_CHARS)
    if not text.strip():
        return lambda _span: True
    parser = _Parser(_tokens(text))
    predicate = parser.expression(0)
    parser.expect_end()
    return predicate


class _Parser:
    def __init__(self, tokens: list[_Token]) -> None:
        self.tokens = tokens
        self.at = 0

    def peek(self) -> _Token:
        return self.tokens[self.at]

    def take(self) -> _Token:
        token = self.tokens[self.at]
        self.at += 1
        return token

    def fail(self, what: str) -> FilterError:
        token = self.peek()
        found = "the end" if token.kind == "end" else repr(token.text)
        return FilterError(EXPECTED(position=token.position, what=what, found=found), token.position)

    def expect_end(self) -> None:
        if self.peek().kind != "end":
            raise self.fail("'and', 'or' or the end")

    def is_word(self, word: str) -> bool:
        token = self.peek()
        return token.kind == "word" and token.text == word

    def expression(self, depth: int) -> Predicate:
        if depth > MAX_DEPTH:
            position = self.peek().position
            raise FilterError(TOO_DEEP(position=position, limit=MAX_DEPTH), position)
        left = self.conjunction(depth)
        while self.is_word("or"):
            self.take()
            right = self.conjunction(depth)
            left = (lambda a, b: lambda s: a(s) or b(s))(left, right)
        return left

    def conjunction(self, depth: int) -> Predicate:
        left = self.negation(depth)
        while self.is_word("and"):
            self.take()
            right = self.negation(depth)
            left = (lambda a, b: lambda s: a(s) and b(s))(left, right)
        return left

    def negation(self, depth: int) -> Predicate:
        if depth > MAX_DEPTH:
            position = self.peek().position
            raise FilterError(TOO_DEEP(position=position, limit=MAX_DEPTH), position)
        if self.is_word("not"):
            self.take()
            inner = self.negation(depth + 1)
            return lambda s: not inner(s)
        if self.peek().text == "(" and self.peek().kind == "op":
            self.take()
            inner = self.expression(depth + 1)
            if self.peek().text != ")":
                raise self.fail("')'")
            self.take()
            return inner
        return self.comparison()

    def comparison(self) -> Predicate:
        if self.peek().kind != "name":
            raise self.fail("an attribute name, 'not' or '('")
        get = _getter(self.take().text)
        token = self.peek()
        if token.kind == "op" and token.text in _COMPARE:
            self.take()
            compare, value = _COMPARE[token.text], self.value()
            return lambda s: _safe(compare, get(s), value)
        if token.kind == "word" and token.text in ("in", "contains", "startswith"):
            self.take()
            if token.text == "in":
                options = self.values()
                return lambda s: get(s) in options
            value = self.value()
            if token.text == "contains":
                return lambda s: _contains(get(s), value)
            return lambda s: isinstance(get(s), str) and isinstance(value, str) and get(s).startswith(value)
        return lambda s: get(s) not in (None, "", False, 0, [], {})

    def value(self) -> Any:
        token = self.peek()
        if token.kind == "number":
            self.take()
            if "." not in token.text and "e" not in token.text.lower():
                return int(token.text)  # exact: an id of 20 digits stays itself
            number = float(token.text)
            if not math.isfinite(number):
                raise FilterError(EXPECTED(position=token.position, what="a number below 1.8e308",
                                           found=repr(token.text)), token.position)
            return number
        if token.kind == "string":
            self.take()
            return re.sub(r"\\(.)", r"\1", token.text[1:-1])
        if token.kind == "word" and token.text in ("true", "false", "null"):
            self.take()
            return {"true": True, "false": False, "null": None}[token.text]
        raise self.fail("a value (\"text\", a number, true, false or null)")

    def values(self) -> list[Any]:
        if self.peek().text != "[":
            raise self.fail("'[' starting a list of values")
        self.take()
        out = [self.value()]
        while self.peek().text == ",":
            self.take()
            out.append(self.value())
        if self.peek().text != "]":
            raise self.fail("',' or ']'")
        self.take()
        return out


def _safe(compare: Callable[[Any, Any], bool], left: Any, right: Any) -> bool:
    try:
        return compare(left, right)
    except TypeError:  # "a" < 3: not matched, never an error
        return False


def _contains(left: Any, right: Any) -> bool:
    if isinstance(left, str):
        return isinstance(right, str) and right in left
    return isinstance(left, list) and right in left


_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "==": lambda a, b: a == b, "!=": lambda a, b: a != b, "<": lambda a, b: a is not None and a < b,
    "<=": lambda a, b: a is not None and a <= b, ">": lambda a, b: a is not None and a > b,
    ">=": lambda a, b: a is not None and a >= b}


def _getter(name: str) -> Getter:
    if name == "span.name":
        return lambda s: s.name
    if name == "span.kind":
        return lambda s: KINDS.get(s.kind, str(s.kind))
    if name == "span.status":
        return lambda s: STATUS.get(s.status_code, str(s.status_code))
    if name == "span.duration_ms":
        return lambda s: (s.end_ns - s.start_ns) / 1e6
    if name.startswith("resource."):
        key = name.removeprefix("resource.")
        return lambda s: s.resource.get(key)
    return lambda s: s.attributes.get(name)
