"""JSON text handed back by a sandbox, parsed into values that every writer accepts.

Both sandboxes (Python and Node.js) return what an evaluator produced as JSON text written by
untrusted code, and must turn the same odd value into the same clean one (the rules are
``core.untrusted``'s: lone surrogates become U+FFFD, NaN and the infinities their names as
text, integers beyond 64 bits their decimal text, nesting deeper than ``MAX_DEPTH`` refused).

The common result is small and plain, so it stays cheap: orjson parses it and two byte scans
show that nothing needs cleaning. Only otherwise (orjson refused a lone surrogate escape or a
``NaN``, or the text has enough brackets to be deep, or a digit run long enough that orjson
would have rounded an integer to a float) is it read again by the standard parser, which keeps
all of those, and normalised by ``clean_json``.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

from assay.core.messages import Phrase, Said, rebuilt
from assay.core.untrusted import MAX_DEPTH, MAX_REASON, TooDeep, clean_json

# What the sandboxes enforce inside, on the evaluator (the Node.js worker repeats them).
MAX_PRINTED_CHARS = 4096
"""Characters of what an evaluation prints that are kept; the rest is counted and noted."""
MAX_RETURNED_JSON_CHARS = 1 << 20
"""Characters of JSON an evaluator's returned value may take."""
# What the host keeps of a sandbox's words, whatever the sandbox sent. The sandboxes cut their
# own first (printing at MAX_PRINTED_CHARS plus a note, stacks at HOST_MAX_TRACEBACK_CHARS,
# messages with ``cap_message``), so these only bind a sandbox that was subverted.
HOST_MAX_PRINTED_CHARS = 2 * MAX_PRINTED_CHARS
HOST_MAX_TRACEBACK_CHARS = 16 * 1024

# What the sandboxes say of an evaluation that failed (the Python child writes them in its
# frames with their phrase, which the host checks: ``as_phrased``).
TOO_DEEP = Phrase("sandbox.returned_too_deep", "the returned value is nested more than {depth} levels deep")
NOT_JSON = Phrase("sandbox.returned_not_json", "the evaluator's result is not valid JSON data ({problem})")
NOT_JSON_DATA = Phrase("sandbox.returned_not_json_data", "the returned value is not JSON data: {problem}")
CYCLE = Phrase("sandbox.returned_cycle", "the returned value contains a reference cycle (a circular structure)")
TOO_LARGE = Phrase("sandbox.returned_too_large", "the returned value is too large: {size} characters of JSON, "
                                                 "more than the limit of {limit}")
NO_FUNCTION = Phrase("sandbox.no_function", "the code defines no function `{function}`")
OUT_OF_MEMORY = Phrase("sandbox.memory_limit", "out of memory (limit {mb} MB)")
EXIT_CALLED = Phrase("sandbox.exit_called", "the evaluator called exit({code})")
DENIED = Phrase("sandbox.denied", "{error} (denied by the sandbox: no files, network, processes or signals)")

# 19 digits reach below -2**63 and 20 beyond 2**64 - 1, where orjson returns a rounded float.
_ZEROED = bytes.maketrans(b"0123456789", b"0" * 10)
_LONG_DIGITS = b"0" * 19
_SQUARE = bytes.maketrans(b"{}", b"[]")
_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b'"[]{}')


def left_running(count: int, what: str) -> str:
    """The line added to what an evaluation printed when it returned with ``count`` timers or
    threads (``what``) still pending: they never ran on, they were dropped with it."""
    return (f"[assay: evaluate() returned with {count} {what}{'s' if count != 1 else ''} still pending; "
            "dropped with the evaluation]")


def cap_message(text: str) -> str:
    """``text`` cut so that, with its note of the full length, it fits in a reason (``MAX_REASON``).

    An error message becomes a result's reason; cut here, where its length is still known,
    the note tells the truth (``Grader.error`` would otherwise cut it again, and count the cut
    text). The Node.js worker cuts its messages the same way (``capMessage``).
    """
    if len(text) <= MAX_REASON:
        return text
    note = f"… [{len(text)} characters in all]"
    return text[:MAX_REASON - len(note)] + note


def load_json(data: bytes, *, max_depth: int = MAX_DEPTH) -> Any:
    """``data`` parsed and normalised; raises ``ValueError`` when it is not JSON, or ``TooDeep``.

    ``max_depth`` counts every container, an envelope around the value included.
    """
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        pass
    else:
        if orjson_exact(data) and _within(data, max_depth):
            return value
    try:
        value = json.loads(data.decode())  # NaN, Infinity, lone surrogates and big integers survive this
    except RecursionError:
        raise TooDeep(f"nested more than {MAX_DEPTH} levels deep") from None
    return clean_json(value, max_depth=max_depth)


def orjson_exact(data: bytes) -> bool:
    """Whether orjson reads every number in JSON ``data`` exactly: no run of 19 digits or more,
    past which it returns a rounded float where the standard parser keeps the integer."""
    return _LONG_DIGITS not in data.translate(_ZEROED)


def _within(data: bytes, max_depth: int) -> bool:
    """Whether valid JSON ``data`` nests no deeper than ``max_depth``, without walking the value.

    Few brackets prove it at once. Otherwise the brackets outside strings are kept (escaped
    backslashes and quotes dropped, then every other piece between quotes) and each pass drops
    the innermost pairs, so the passes needed are the depth. All of it is C-level byte work:
    a long flat list costs a pass or two, not a walk of every row.
    """
    if data.count(b"[") + data.count(b"{") <= max_depth:
        return True
    quoted = data.replace(b"\\\\", b"").replace(b'\\"', b"").translate(_SQUARE, _NOT_STRUCTURE)
    brackets = b"".join(quoted.split(b'"')[::2])
    for _ in range(max_depth):
        if not brackets:
            return True
        brackets = brackets.replace(b"[]", b"")
    return not brackets


def refusal(exc: ValueError) -> Said:
    """What an outcome says when ``load_json`` refused a result (the same for both sandboxes)."""
    if isinstance(exc, TooDeep):
        return TOO_DEEP(depth=MAX_DEPTH)
    return NOT_JSON(problem=str(exc).split(':')[0])


def phrase_of(message: str) -> dict[str, Any] | None:
    """How a frame or a response carries the phrase that said ``message`` (None: no phrase)."""
    return {"code": message.code, "args": message.args} if isinstance(message, Said) else None


def as_phrased(phrase: Any, message: str) -> str:
    """``message`` as the phrase a sandbox named said it, when that phrase is known and its
    values fit it (the host's own English text then); else ``message`` as written. A sandbox
    runs untrusted code, so a phrase it names is checked, never trusted."""
    said = rebuilt(phrase.get("code"), phrase.get("args")) if isinstance(phrase, dict) else None
    return message if said is None else cap_message(said)
