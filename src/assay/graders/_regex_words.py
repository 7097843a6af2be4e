"""Why a pattern does not compile, as a phrase: the backtracking engine (the ``regex`` module)
words its syntax errors in English; each common one is a phrase here, so the pages say it in
their language. The English text is the engine's own; a message not listed stays as written."""

from __future__ import annotations

from assay.core.messages import Phrase

_WHOLE = {message: Phrase(f"regex.problem.{code}", message) for code, message in (
    ("missing_paren", "missing )"), ("unbalanced", "unbalanced parenthesis"),
    ("unterminated_set", "unterminated character set"), ("nothing_to_repeat", "nothing to repeat"),
    ("multiple_repeat", "multiple repeat"), ("escape_at_end", "bad escape (end of pattern)"),
    ("missing_gt", "missing >"), ("missing_bracket", "missing ]"), ("missing_brace", "missing }"),
    ("expected_brace", "expected }"), ("bad_range", "bad character range"),
    ("min_over_max", "min repeat greater than max repeat"), ("repeat_too_big", "repeat count too big"),
    ("bad_group_name", "bad character in group name"), ("missing_group_name", "missing group name"),
    ("bad_reference", "invalid group reference"), ("unknown_group", "unknown group"),
    ("open_group", "cannot refer to an open group"), ("reference_not_allowed", "group reference not allowed"),
    ("ambiguous_reference", "ambiguous group reference"), ("unknown_property", "unknown property"),
    ("unknown_property_value", "unknown property value"), ("unknown_extension", "unknown extension"),
    ("undefined_name", "undefined character name"), ("expected_set", "expected character set"),
    ("unknown_verb", "unknown verb"), ("no_flags_after_minus", "bad inline flags: no flags after '-'"),
    ("flag_on_and_off", "bad inline flags: flag turned on and off"),
    ("global_flag_off", "bad inline flags: cannot turn off global flag"))}
_STARTING = tuple((Phrase(f"regex.problem.{code}", text), text.removesuffix("{escape}")) for code, text in (
    ("bad_escape", "bad escape {escape}"), ("incomplete_escape", "incomplete escape {escape}"),
    ("bad_hex_escape", "bad hex escape {escape}")))


def problem(message: str) -> str:
    """The engine's ``message`` as its phrase (a ``Said``), or as written."""
    whole = _WHOLE.get(message)
    if whole is not None:
        return whole()
    for phrase, words in _STARTING:
        if message.startswith(words):
            return phrase(escape=message[len(words):])
    return message
