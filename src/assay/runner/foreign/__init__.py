"""Runs written by other tools, read as assay's verdicts so that `assay compare` and
`assay report` answer for them as for assay's own results files.

One module per tool, alike: ``claims(doc)`` says whether a parsed JSON document is that tool's,
``verdicts``/``read_*`` map it (``promptfoo``: ``promptfoo eval -o results.json``, and its JSON
lines; ``inspect_log``: Inspect AI's ``.eval`` and ``.json`` logs). ``read_foreign`` tells them
apart by content, never by the file's name: a zip is an Inspect ``.eval`` log; a JSON document
is parsed and offered to each tool's ``claims``, and JSON lines whose first line is a promptfoo
result are promptfoo's. assay's own JSON lines (whose first key is ``id``) are left alone
without a parse, so a large results file costs nothing here.
"""

from __future__ import annotations

import re
from pathlib import Path

import orjson

from assay.core.aggregate import SampleVerdict
from assay.core.errors import SpecError
from assay.runner.files import open_regular
from assay.runner.foreign import inspect_log, promptfoo

_ZIP = b"PK\x03\x04"
_FIRST_KEY = re.compile(rb'\A\s*\{\s*"((?:[^"\\]|\\.){0,64})"')
_HEAD = 4096


def read_foreign(path: Path) -> list[SampleVerdict] | None:
    """The verdicts of ``path`` when another tool wrote it; None for assay's own results
    (the caller reads those). SpecError, naming the file and the place, for a damaged file."""
    with open_regular(path, what="results file") as fh:
        head = fh.read(_HEAD)
        if head.startswith(_ZIP):
            fh.close()
            return inspect_log.read_zip(path)
        first = _FIRST_KEY.match(head)
        if first is None or first.group(1) == b"id":
            return None  # not a JSON object, or assay's own line
        data = head + fh.read()
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        if first.group(1) in (b"evalId", b"version"):  # how promptfoo's and Inspect's files begin
            raise SpecError(f"damaged or truncated JSON ({exc}); a promptfoo or Inspect AI file must be "
                            "whole", where=str(path)) from None
        return _promptfoo_lines(path, data)
    if promptfoo.claims(doc):
        return promptfoo.verdicts(doc, where=str(path))
    if inspect_log.claims(doc):
        return inspect_log.read_json(path, doc)
    return None


def _promptfoo_lines(path: Path, data: bytes) -> list[SampleVerdict] | None:
    """promptfoo's JSON lines when the first line is one of its results, else None (assay's
    own results reader then reads the file, and says what is wrong with it)."""
    lines = data.split(b"\n")
    try:
        first = orjson.loads(lines[0])
    except orjson.JSONDecodeError:
        return None
    if not promptfoo.claims_row(first):
        return None
    rows, places = [], []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            rows.append(orjson.loads(line))
        except orjson.JSONDecodeError as exc:
            raise SpecError(f"damaged or truncated line of promptfoo's JSON lines ({exc})",
                            where=f"{path}:{n}") from None
        places.append(f"{path}:{n}")
    return promptfoo.rows_verdicts(rows, places)
