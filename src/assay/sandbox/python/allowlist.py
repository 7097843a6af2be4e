"""The modules a Python code evaluator may import.

Allowed (top-level names; their submodules that the zygote loaded come along):

- text and data: ``json``, ``re``, ``string``, ``difflib``, ``unicodedata``, ``textwrap``,
  ``html``, ``base64``, ``hashlib``, ``csv``
- numbers: ``math``, ``statistics``, ``decimal``, ``fractions``, ``random``, ``operator``
- time: ``datetime``, ``time``, ``calendar``
- structures: ``collections``, ``itertools``, ``functools``, ``heapq``, ``bisect``, ``copy``,
  ``dataclasses``, ``enum``, ``typing``
- async: ``asyncio`` (an ``async def evaluate`` runs on a fresh event loop)
- third party: ``jsonschema`` (JSON Schema validation), ``jsonschema_rs`` (a faster one),
  ``rapidfuzz`` (string similarity), ``regex`` (the extended regular-expression engine)

They are imported once by each zygote, so an evaluation pays nothing to use them. Importing
any other module raises ``ImportError`` in the user's code. That is a convenience that makes
mistakes obvious, **not** the security boundary: ``collections._sys.modules['os']`` still
reaches ``os``. The boundary is the OS confinement each evaluation runs under
(:mod:`assay.sandbox.confine`): no files, no network, no processes, no signals.
"""

from __future__ import annotations

import builtins
import importlib
from typing import Any

ALLOWED_MODULES: tuple[str, ...] = (
    "json", "re", "string", "difflib", "unicodedata", "textwrap", "html", "base64", "hashlib", "csv",
    "math", "statistics", "decimal", "fractions", "random", "operator",
    "datetime", "time", "calendar",
    "collections", "itertools", "functools", "heapq", "bisect", "copy", "dataclasses", "enum", "typing",
    "asyncio",
    "jsonschema", "jsonschema_rs", "rapidfuzz", "regex",
)

# Loaded lazily by the modules above on first use; the confined child cannot read files, so
# the zygote loads them in advance (strptime, the codecs str.encode looks up, fuzz internals).
_LAZY_DEPENDENCIES: tuple[str, ...] = (
    "_strptime", "encodings.latin_1", "encodings.ascii", "encodings.utf_16", "encodings.utf_32",
    "encodings.cp1252", "encodings.idna", "encodings.unicode_escape", "encodings.raw_unicode_escape",
    "encodings.utf_8_sig", "encodings.punycode", "json.decoder", "json.encoder", "html.entities",
    "collections.abc", "asyncio.selector_events", "rapidfuzz.fuzz", "rapidfuzz.distance",
    "rapidfuzz.process", "rapidfuzz.utils", "traceback", "linecache", "tokenize",
)


def preload() -> list[str]:
    """Import the allow-list and warm lazy caches; return the names that could not be imported."""
    missing = []
    for name in ALLOWED_MODULES + _LAZY_DEPENDENCIES:
        try:
            importlib.import_module(name)
        except ImportError:
            missing.append(name)
    _warm_jsonschema()
    _warm_jsonschema_rs()
    import datetime

    datetime.datetime.strptime("2024-01-02", "%Y-%m-%d")  # builds _strptime's locale caches
    return missing


def _warm_jsonschema() -> None:
    """Run one validation per draft so referencing's registries and format checkers are loaded."""
    try:
        import jsonschema
    except ImportError:
        return
    for cls in (jsonschema.Draft202012Validator, jsonschema.Draft201909Validator,
                jsonschema.Draft7Validator, jsonschema.Draft6Validator, jsonschema.Draft4Validator):
        cls.check_schema({"type": "object", "properties": {"a": {"type": "string", "format": "date"}}})
        validator = cls({"type": "object", "properties": {"a": {"type": "string", "format": "email"}}},
                        format_checker=cls.FORMAT_CHECKER)
        list(validator.iter_errors({"a": "x@y.z"}))
    jsonschema.validate({"a": 1}, {"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object"})


def _warm_jsonschema_rs() -> None:
    """jsonschema_rs resolves the Python types it converts on first use: do that here."""
    try:
        import jsonschema_rs
    except ImportError:
        return
    sample = {"i": 1, "f": 1.5, "s": "x", "b": True, "n": None, "l": [1], "d": {"k": 2 ** 70}}
    jsonschema_rs.is_valid({"type": "object"}, sample)
    jsonschema_rs.validator_for({"type": "integer"}).is_valid(3)


def restricted_builtins() -> dict[str, Any]:
    """A copy of the builtins whose ``__import__`` admits only the allow-list.

    Installed as ``__builtins__`` of the user's module only, so library code keeps the real
    import machinery for its own (already loaded) dependencies.
    """
    real_import = builtins.__import__
    allowed = frozenset(ALLOWED_MODULES)

    def guarded_import(name: str, globals: Any = None, locals: Any = None, fromlist: Any = (), level: int = 0) -> Any:
        if level != 0:
            raise ImportError("relative imports are not available in a code evaluator")
        if name.partition(".")[0] not in allowed:
            raise ImportError(f"module {name!r} is not available in a code evaluator; "
                              f"allowed: {', '.join(sorted(allowed))}")
        return real_import(name, globals, locals, fromlist, level)

    table = dict(vars(builtins))
    table["__import__"] = guarded_import
    return table
