"""Messages the product writes, each under a stable code, so a page can say them in its own
language while results and API answers stay language-neutral.

A ``Phrase`` is one message: a code (``regex.no_match``) and its English template with
``{name}`` placeholders. Calling it with the values gives a ``Said``: the English text (a
``str``, so the library, the CLI and the API's ``reason`` read it unchanged) that also carries
the code and the values. The result builders (``Grader.scored_result`` and its siblings) store
those beside the text as ``GraderResult.reason_code`` and ``reason_args``; the API's error
answers carry them as ``messageCode`` and ``messageArgs``. The pages' catalogues hold one entry
per code (``reason.<code>``), in every language, with the same placeholders; a text without a
code (what user code or a judge wrote) is shown as written.

Every phrase is defined at import of the module that says it, and lands in one registry
(``phrases()``), which the catalogue test walks: a phrase missing from a catalogue fails it.

    NO_MATCH = Phrase("regex.no_match", "output does not match {pattern}")
    reason = NO_MATCH(pattern="/a+/")     # "output does not match /a+/", .code, .args
"""

from __future__ import annotations

import re
from typing import Any

Arg = str | int | float | bool | None
"""A value a phrase may carry: a plain JSON scalar, or a ``Said`` (a phrase inside a phrase:
``a number (42)`` in ``output is a number (42)``), kept as ``{"code", "args"}``."""

_CODE = re.compile(r"[a-z][a-z0-9_]*(\.[a-z0-9_]+)+")
_new_str = str.__new__
_PLACEHOLDER = re.compile(r"\{(\w+)\}")
_REGISTRY: dict[str, Phrase] = {}


class Said(str):
    """English text said by a ``Phrase``: a ``str`` that also carries the phrase's ``code``
    and the ``args`` that filled it. Any string operation on it gives a plain ``str``."""

    code: str
    args: dict[str, Any]
    """The values as stored: scalars, and ``{"code", "args"}`` for a phrase inside."""

    def __new__(cls, text: str, code: str, args: dict[str, Any]) -> Said:
        said = super().__new__(cls, text)
        said.code = code
        said.args = args
        return said

    def __reduce__(self) -> tuple[Any, ...]:  # pickles across processes (Ray, worker pools)
        return (Said, (str(self), self.code, self.args))


class Phrase:
    """One message the product writes: ``code`` and its English ``text`` with ``{name}``
    placeholders (no format specs: the pages fill the same placeholders). Defined once, at
    module level; a second phrase with the same code and another text is a programming error."""

    __slots__ = ("code", "text", "names", "_format")
    code: str
    text: str
    names: set[str]

    def __init__(self, code: str, text: str) -> None:
        if not _CODE.fullmatch(code):
            raise ValueError(f"phrase code {code!r}: dotted lower-case words, e.g. regex.no_match")
        names = placeholders(text)
        known = _REGISTRY.get(code)
        if known is not None and known.text != text:
            raise ValueError(f"phrase code {code!r} is defined twice with different texts")
        self.code, self.text, self.names = code, text, names
        # str.format fills in one pass (a value holding "{name}" is not filled again) and in C;
        # the text's other braces are escaped for it.
        parts = _PLACEHOLDER.split(text)  # text, name, text, name, ..., text
        self._format = "".join("{" + part + "}" if i % 2 else part.replace("{", "{{").replace("}", "}}")
                               for i, part in enumerate(parts)).format
        _REGISTRY.setdefault(code, self)

    def __call__(self, **args: Arg) -> Said:
        if len(args) != len(self.names):  # (a name missing fails the formatting below)
            raise TypeError(f"phrase {self.code!r} takes {sorted(self.names)}, got {sorted(args)}")
        try:
            text = self._format(**args)
        except KeyError:
            raise TypeError(f"phrase {self.code!r} takes {sorted(self.names)}, got {sorted(args)}") from None
        kept: dict[str, Any] = args
        for name, value in args.items():
            if type(value) is Said:  # kept as {code, args}, so the values stay plain JSON
                kept[name] = {"code": value.code, "args": value.args}
        said = _new_str(Said, text)  # as Said(...) does, without its call: phrases are said per sample
        said.code, said.args = self.code, kept
        return said

    def told(self, text: str, args: dict[str, Any]) -> Said:
        """The ``Said`` of this phrase whose ``text`` was already made from ``args`` elsewhere
        (a columnar kernel builds a column's texts at once): no formatting, no checks, so the
        caller answers for ``text`` being the template filled with plain ``args``."""
        said = _new_str(Said, text)
        said.code, said.args = self.code, args
        return said

    def __repr__(self) -> str:
        return f"Phrase({self.code!r}, {self.text!r})"


def placeholders(text: str) -> set[str]:
    """The ``{name}`` placeholders of a template (or of a catalogue's message)."""
    return set(_PLACEHOLDER.findall(text))


def phrases() -> dict[str, Phrase]:
    """Every phrase defined so far, by code (import a module to define its phrases)."""
    return dict(_REGISTRY)


def said_again(text: str, code: str | None, args: dict[str, Any] | None) -> str:
    """A stored reason with its code and arguments, as the phrase said it (a plain text
    without a code)."""
    return text if code is None or args is None else Said(text, code, args)


def code_and_args(text: str | None) -> tuple[str | None, dict[str, Any] | None]:
    """A reason's code and arguments when a phrase said it, else ``(None, None)``."""
    if isinstance(text, Said):
        return text.code, text.args
    return None, None


ITEMS = Phrase("list.items", "{items}")
"""Several phrases said one after another, ``; `` between them (the pages use their language's
separator, the catalogue's ``reason.separator``)."""


def in_turn(items: list[Said]) -> Said:
    """``items`` said one after another: ``missing /a/; forbidden /b/`` (one item: itself)."""
    if len(items) == 1:
        return items[0]
    return Said("; ".join(items), ITEMS.code, {"items": [{"code": i.code, "args": i.args} for i in items]})


def rebuilt(code: Any, args: Any) -> Said | None:
    """The ``Said`` that a stored or received ``{code, args}`` stands for, its English text made
    again here; None unless every code (nested ones too) is a known phrase whose values fit it.
    For what comes from elsewhere (a sandbox, the sandbox service), which is checked, not trusted."""
    known = _REGISTRY.get(code) if isinstance(code, str) else None
    if known is None or not isinstance(args, dict) or args.keys() != known.names:
        return None
    if known is ITEMS:
        items = args["items"]
        parts = [rebuilt(i.get("code"), i.get("args")) for i in items if isinstance(i, dict)] \
            if isinstance(items, list) and len(items) > 1 else []
        return None if not parts or len(parts) != len(items) or None in parts else in_turn(parts)  # type: ignore[arg-type]  # None is excluded by the test before it
    values: dict[str, Arg] = {}
    for name, value in args.items():
        if isinstance(value, dict):
            inner = rebuilt(value.get("code"), value.get("args"))
            if inner is None:
                return None
            values[name] = inner
        elif value is None or isinstance(value, (str, int, float, bool)):
            values[name] = value
        else:
            return None
    return known(**values)
