"""Why code does not parse, as a phrase: Python's parser and V8 word their syntax errors in
English; each common one is a phrase here, so the pages say it in their language (``缺少 ':'``).
The English text is the parser's own; a message not listed stays as written. The same for both
languages: ``check_python_source`` and the Node.js sandbox's check call ``said``."""

from __future__ import annotations

import re

from assay.core.messages import Phrase

_PATTERNS: tuple[tuple[re.Pattern[str], Phrase], ...] = tuple((re.compile(pattern), Phrase(code, text)) for
                                                              pattern, code, text in (
    # Python (3.11+)
    (r"invalid syntax", "syntax.invalid", "invalid syntax"),
    (r"invalid syntax\. Perhaps you forgot a comma\?", "syntax.comma", "invalid syntax. Perhaps you forgot a comma?"),
    (r"expected '(?P<token>.{1,8})'", "syntax.expected", "expected '{token}'"),
    (r"unexpected indent", "syntax.unexpected_indent", "unexpected indent"),
    (r"unindent does not match any outer indentation level", "syntax.unindent",
     "unindent does not match any outer indentation level"),
    (r"expected an indented block after (?P<what>.{1,60}) on line (?P<line>\d+)", "syntax.indented_block",
     "expected an indented block after {what} on line {line}"),
    (r"expected an indented block", "syntax.indented_block_bare", "expected an indented block"),
    (r"unterminated string literal \(detected at line (?P<line>\d+)\)", "syntax.unterminated_string",
     "unterminated string literal (detected at line {line})"),
    (r"unterminated triple-quoted string literal \(detected at line (?P<line>\d+)\)",
     "syntax.unterminated_triple", "unterminated triple-quoted string literal (detected at line {line})"),
    (r"'(?P<bracket>[(\[{])' was never closed", "syntax.never_closed", "'{bracket}' was never closed"),
    (r"unmatched '(?P<bracket>[)\]}])'", "syntax.unmatched", "unmatched '{bracket}'"),
    (r"closing parenthesis '(?P<close>[)\]}])' does not match opening parenthesis '(?P<open>[(\[{])'",
     "syntax.mismatched", "closing parenthesis '{close}' does not match opening parenthesis '{open}'"),
    (r"invalid character '(?P<char>.)' \((?P<point>U\+[0-9A-F]{4,6})\)", "syntax.invalid_character",
     "invalid character '{char}' ({point})"),
    (r"invalid non-printable character (?P<point>U\+[0-9A-F]{4,6})", "syntax.non_printable",
     "invalid non-printable character {point}"),
    (r"invalid decimal literal", "syntax.decimal", "invalid decimal literal"),
    (r"'return' outside function", "syntax.return_outside", "'return' outside function"),
    (r"unexpected EOF while parsing", "syntax.eof", "unexpected EOF while parsing"),
    # V8 (Node.js)
    (r"Unexpected end of input", "syntax.js_end", "Unexpected end of input"),
    (r"Unexpected token '(?P<token>.{1,20})'", "syntax.js_token", "Unexpected token '{token}'"),
    (r"Unexpected identifier '(?P<name>.{1,60})'", "syntax.js_identifier", "Unexpected identifier '{name}'"),
    (r"Unexpected identifier", "syntax.js_identifier_bare", "Unexpected identifier"),
    (r"Unexpected string", "syntax.js_string", "Unexpected string"),
    (r"Unexpected number", "syntax.js_number", "Unexpected number"),
    (r"Invalid or unexpected token", "syntax.js_invalid_token", "Invalid or unexpected token"),
    (r"missing \) after argument list", "syntax.js_missing_paren", "missing ) after argument list"),
    (r"Unexpected strict mode reserved word", "syntax.js_reserved", "Unexpected strict mode reserved word"),
))


def said(message: str) -> str:
    """The parser's ``message`` as its phrase (a ``Said``: the same English text, with a code the
    pages say in their language), or as written when it is none of the common ones."""
    for pattern, phrase in _PATTERNS:
        found = pattern.fullmatch(message)
        if found is not None:
            return phrase(**found.groupdict())
    return message
