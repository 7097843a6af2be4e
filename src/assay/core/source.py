"""The one check of a Python evaluator's source, before anything runs it.

Pure: the source is compiled to bytecode, exactly as the sandbox compiles it (``compile_python``
is used by both), and never executed. Compiling, not only parsing, matters: ``return``,
``yield`` or ``await`` at module level, a ``break`` outside a loop or a misplaced
``from __future__`` all parse, and only the compiler rejects them; a check that stopped at
``ast.parse`` would let them through to fail at grade time instead. The code grader's config
validator and the Python sandbox's ``check`` both call ``check_python_source``, so a source is
accepted or refused the same way everywhere.
"""

import __future__

import ast
from types import CodeType

from assay.core import syntax_words
from assay.core.messages import Phrase

FILENAME = "<evaluator>"
"""The file name evaluator code is compiled under (tracebacks keep only its frames)."""

# Evaluator code has always been compiled with postponed annotations (PEP 563), inherited from
# the sandbox module that compiled it; explicit here, so the check and the sandbox agree.
_FLAGS = __future__.annotations.compiler_flag


def compile_python(source: str | ast.Module) -> CodeType:
    """``source`` (text or its parsed tree) compiled as an evaluator module; nothing runs.

    Raises what ``compile`` raises: ``SyntaxError`` (with the line), ``ValueError``,
    ``MemoryError`` or ``RecursionError`` for absurdly nested code.
    """
    return compile(source, FILENAME, "exec", flags=_FLAGS, dont_inherit=True)


SYNTAX = Phrase("source.syntax", "syntax error: {message}")
SYNTAX_AT = Phrase("source.syntax_at", "syntax error at line {line}, column {column}: {message}")
UNCOMPILABLE = Phrase("source.uncompilable", "the source cannot be compiled: {problem}")
TOO_NESTED = Phrase("source.too_nested", "the source is nested too deeply to compile")
NO_FUNCTION = Phrase("source.no_function", "no top-level function `{function}` is defined "
                                           "(def {function}(input, output, expected, metadata))")


def check_python_source(source: str, function: str = "evaluate") -> str | None:
    """The problem with ``source`` as a Python evaluator, with its line; None when it compiles
    and defines a top-level (sync or async) ``function``."""
    try:
        tree = ast.parse(source, filename=FILENAME)
        compile_python(tree)
    except SyntaxError as exc:
        if exc.lineno is None:  # e.g. a NUL byte: no position to give
            return SYNTAX(message=syntax_words.said(exc.msg))
        return SYNTAX_AT(line=exc.lineno, column=exc.offset, message=syntax_words.said(exc.msg))
    except ValueError as exc:  # a NUL byte in the source, on Pythons that do not say SyntaxError
        return UNCOMPILABLE(problem=str(exc))
    except (MemoryError, RecursionError):  # the parser's or the compiler's stack ran out
        return TOO_NESTED()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == function:
            return None
    return NO_FUNCTION(function=function)
