"""CSV and TSV datasets, checked row by row.

The reader is strict: a row must have one cell per header column, a header name must be
present and unique, and a quote left open is an error rather than the rest of the file read
into one cell. A ``metadata`` column holds a JSON object.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from assay.core.errors import SpecError
from assay.core.messages import Phrase
from assay.runner.dataset import _text
from assay.runner.dataset._encoding import as_utf8
from assay.runner.dataset._json import BadJson, parse_json

DELIMITERS = {",": ",", ";": ";", "\t": "\t", "tab": "\t", "|": "|"}
"""Delimiters a dataset may name, by spelling (``tab`` is easier to write in YAML than ``"\\t"``)."""
_SPELLING = {",": "','", ";": "';'", "\t": "tab", "|": "'|'"}


def csv_rows(fh: BinaryIO, path: Path, delimiter: str, on_encoding: Callable[[str], None] | None = None,
             rename: dict[str, str] | None = None) -> Iterator[tuple[int, dict[str, Any]]]:
    """The numbered rows of a CSV file in any encoding ``_encoding`` tells (handed to
    ``on_encoding``), the header's columns named in ``rename`` read as the fields it gives
    (``{"问题": "input"}``)."""
    src, records = _opened(fh, path, delimiter, on_encoding)
    header: list[str] | None = None
    header_line = 0
    for start, cells in records:
        if header is None:
            header, header_line = _checked_header(cells, delimiter, f"{path}:{start}"), start
            header = _renamed(header, rename or {}, f"{path}:{start}")
            continue
        if header_line:
            _check_delimiter(header, cells, delimiter, f"{path}:{header_line}")
            header_line = 0
        if len(cells) != len(header):
            raise _width_error(len(cells), len(header), delimiter, start, src.line_no, f"{path}:{start}")
        data: dict[str, Any] = dict(zip(header, cells))
        if "metadata" in data:
            data["metadata"] = csv_metadata(data["metadata"], f"{path}:{start}")
        yield start, data


def csv_header(fh: BinaryIO, path: Path, delimiter: str) -> tuple[str, list[str]]:
    """The encoding a CSV file is in and its header's column names, from its first bytes (what a
    page shows before the upload, to map the columns); SpecError as ``csv_rows`` says it."""
    found: list[str] = []
    _, records = _opened(fh, path, delimiter, found.append)
    for start, cells in records:
        return found[0], _checked_header(cells, delimiter, f"{path}:{start}")
    return (found or ["UTF-8"])[0], []


def _opened(fh: BinaryIO, path: Path, delimiter: str,
            on_encoding: Callable[[str], None] | None) -> tuple[_Lines, Iterator[tuple[int, list[str]]]]:
    # Process-wide, so only ever raised: a row is bounded by MAX_LINE_BYTES already.
    if csv.field_size_limit() < _text.MAX_LINE_BYTES:
        csv.field_size_limit(_text.MAX_LINE_BYTES)
    utf8, encoding = as_utf8(fh, path)
    if on_encoding is not None:
        on_encoding(encoding)
    src = _Lines(utf8, path)
    return src, _records(csv.reader(src, delimiter=delimiter, strict=True), src, path)


RENAMED_TWICE = Phrase("dataset.column_mapped_twice", "columns {columns} are all mapped to {field}; map one")
NO_SUCH_COLUMN = Phrase("dataset.no_such_column", "{field} is mapped to column {column}, which the header "
                                                  "does not have (it has {header})")
TAKEN = Phrase("dataset.column_taken", "{column} is mapped to {field}, but the file has a column {field} too; "
                                       "map that one or rename it")


NAMELESS = Phrase("dataset.csv.nameless_column", "column {column} of the header has no name; name every column "
                                                "(a {delimiter} at the end of the header line makes an empty one)")
REPEATED = Phrase("dataset.csv.repeated_column", "column {column} of the header repeats {name} (column {first}); "
                                                 "each column needs its own name")
ONE_COLUMN = Phrase("dataset.csv.one_column", "the header has a single column but the file looks separated by "
                                              "{delimiter}; set `delimiter: {spelling}`")
TOO_MANY_CELLS = Phrase("dataset.csv.too_many_cells", "row has {cells} cells but the header has {width}; quote "
                                                      "cells that contain {delimiter}")
TOO_FEW_CELLS = Phrase("dataset.csv.too_few_cells", "row has {cells} cells but the header has {width}; give every "
                                                    "column a cell, even an empty one")
ROW_SPANS = Phrase("dataset.csv.row_spans_lines", "row has {cells} cells but the header has {width}; this row runs "
                                                  "from line {start} to {end}: check for a quote left open")
UNTERMINATED = Phrase("dataset.csv.unterminated_quote", "unterminated quote: a quoted cell in the row starting on "
                                                        "line {start} is never closed, so the rest of the file was "
                                                        "read into it; close the quote")
AFTER_QUOTE = Phrase("dataset.csv.after_quote", "text after the closing quote of a cell; inside a quoted cell "
                                                "write a quote twice (\"\")")
AFTER_QUOTE_OPEN = Phrase("dataset.csv.after_quote_open", "text after the closing quote of a cell; inside a quoted "
                                                          "cell write a quote twice (\"\") (this row starts on line "
                                                          "{start}: check for a quote left open there)")
CARRIAGE_RETURN = Phrase("dataset.csv.carriage_return", "a carriage return (\\r) inside an unquoted cell; save the "
                                                        "file with \\n or \\r\\n line endings, or quote the cell")
INVALID = Phrase("dataset.csv.invalid", "invalid CSV: {message}")


def _shown(delimiter: str) -> str:
    """A delimiter as the messages show it, in backticks (a tab as `\\t`)."""
    return "`\\t`" if delimiter == "\t" else f"`{delimiter}`"


def _renamed(header: list[str], rename: dict[str, str], where: str) -> list[str]:
    """``header`` with the columns ``rename`` names read as its fields; SpecError (at ``where``)
    for a column the header lacks, or a field given by two columns."""
    if not rename:
        return header
    for column, field in rename.items():
        if column not in header:
            raise SpecError(NO_SUCH_COLUMN(field=field, column=_short(column),
                                           header=", ".join(_short(c) for c in header[:20])), where=where)
        if field in header and field not in rename:
            raise SpecError(TAKEN(column=_short(column), field=field), where=where)
    fields = list(rename.values())
    for field in fields:
        if fields.count(field) > 1:
            raise SpecError(RENAMED_TWICE(columns=", ".join(_short(c) for c, f in rename.items() if f == field),
                                          field=field), where=where)
    return [rename.get(name, name) for name in header]


def _records(reader: Any, src: _Lines, path: Path) -> Iterator[tuple[int, list[str]]]:
    """Non-blank records with the line each starts on; csv errors named by line."""
    while True:
        src.next_row()
        try:
            cells = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise _csv_error(str(exc), src.row_start, src.line_no, path) from None
        if cells:
            yield src.row_start, cells


class _Lines:
    """Decoded lines for ``csv.reader``, counting the bytes of the row being read."""

    def __init__(self, fh: BinaryIO, path: Path) -> None:
        self._lines = _text.lines(fh, path)
        self._path = path
        self._row_bytes = 0
        self.line_no = 0
        self.row_start = 1

    def __iter__(self) -> _Lines:
        return self

    def __next__(self) -> str:
        self.line_no, raw = next(self._lines)
        self._row_bytes += len(raw)
        if self._row_bytes > _text.MAX_LINE_BYTES:
            size = _text.size_text(_text.MAX_LINE_BYTES)
            raise SpecError(f"the row is longer than {size} (by line {self.line_no}); a quote left open "
                            "reads the following lines into one cell", where=f"{self._path}:{self.row_start}")
        return _text.utf8(raw, f"{self._path}:{self.line_no}")

    def next_row(self) -> None:
        self.row_start = self.line_no + 1
        self._row_bytes = 0


def _checked_header(cells: list[str], delimiter: str, where: str) -> list[str]:
    seen: dict[str, int] = {}
    for i, name in enumerate(cells, 1):
        if not name.strip():
            raise SpecError(NAMELESS(column=i, delimiter=_shown(delimiter)), where=where)
        if name in seen:
            raise SpecError(REPEATED(column=i, name=_short(name), first=seen[name]), where=where)
        seen[name] = i
    return cells


def _check_delimiter(header: list[str], cells: list[str], delimiter: str, where: str) -> None:
    """A header and first row of one column each, both holding another delimiter: the wrong one."""
    if len(header) != 1 or len(cells) != 1:
        return
    for other in _SPELLING:
        if other != delimiter and other in header[0] and other in cells[0]:
            raise SpecError(ONE_COLUMN(delimiter=_shown(other), spelling=_SPELLING[other]), where=where)


def _width_error(n: int, width: int, delimiter: str, start: int, end: int, where: str) -> SpecError:
    if end > start:
        return SpecError(ROW_SPANS(cells=n, width=width, start=start, end=end), where=where)
    if n > width:
        return SpecError(TOO_MANY_CELLS(cells=n, width=width, delimiter=_shown(delimiter)), where=where)
    return SpecError(TOO_FEW_CELLS(cells=n, width=width), where=where)


def _csv_error(message: str, start: int, line: int, path: Path) -> SpecError:
    if "unexpected end of data" in message:
        return SpecError(UNTERMINATED(start=start), where=f"{path}:{start}")
    if "expected after" in message:
        return SpecError(AFTER_QUOTE_OPEN(start=start) if line > start else AFTER_QUOTE(), where=f"{path}:{line}")
    if "new-line character" in message:
        return SpecError(CARRIAGE_RETURN(), where=f"{path}:{line}")
    return SpecError(INVALID(message=message), where=f"{path}:{line}")


def csv_metadata(cell: str, where: str) -> Any:
    """A CSV ``metadata`` cell read as JSON (empty: ``{}``); SpecError at ``where`` otherwise."""
    if not cell:
        return {}
    try:
        return parse_json(cell.encode("utf-8"))
    except BadJson as exc:
        raise SpecError(f"metadata: not a JSON object: {exc}", where=where) from None


def _short(text: str, limit: int = 60) -> str:
    return repr(text) if len(text) <= limit else repr(text[:limit]) + "…"
