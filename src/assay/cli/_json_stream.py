"""JSON written as it is read: a document whose lists may be read back lazily (any
``Sequence`` other than a list), printed piece by piece with the same text as
``orjson.dumps(doc, option=OPT_INDENT_2)`` gives for it held whole."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import IO, Any

import orjson


def write_json(value: Any, out: IO[str], depth: int = 0) -> None:
    """Write ``value`` to ``out`` indented by two spaces, as orjson's OPT_INDENT_2 does."""
    pad = "  " * (depth + 1)
    if isinstance(value, Mapping):
        if not value:
            out.write("{}")
            return
        out.write("{")
        for i, (key, item) in enumerate(value.items()):
            out.write(("," if i else "") + "\n" + pad + orjson.dumps(key).decode() + ": ")
            write_json(item, out, depth + 1)
        out.write("\n" + "  " * depth + "}")
    elif isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        started = False
        for item in value:
            out.write(("," if started else "[") + "\n" + pad)
            if isinstance(item, (list, Mapping)) and _plain(item):  # one call to orjson, indented to fit
                out.write(orjson.dumps(item, option=orjson.OPT_INDENT_2).decode().replace("\n", "\n" + pad))
            else:
                write_json(item, out, depth + 1)
            started = True
        out.write("\n" + "  " * depth + "]" if started else "[]")
    else:
        out.write(orjson.dumps(value).decode())


def _plain(value: Any) -> bool:
    """Whether ``value`` holds only what orjson writes itself (no lazily read lists inside)."""
    items = value.values() if isinstance(value, Mapping) else value
    return all(not isinstance(v, (Mapping, Sequence)) or isinstance(v, str) or
               (isinstance(v, (list, dict)) and _plain(v)) for v in items)
