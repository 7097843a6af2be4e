"""Datasets: JSONL, CSV/TSV, JSON or Parquet rows with ``id``, ``input``, ``output``, ``expected``, ``metadata``.

Columns that are not Sample fields go into ``metadata`` (the product spec's "other dataset
fields"). Every error is a SpecError naming ``file:line`` and saying what to do.

What is accepted:

- only a regular file (a FIFO, a device or a directory is refused without blocking);
- UTF-8 text, with or without a BOM (in JSONL and JSON, UTF-16/32 and stray bytes are errors naming
  line and column); CSV and TSV also in UTF-16/32 with a BOM, and in GBK/GB18030, Big5 and the other
  East Asian code pages Excel saves in, told from the file's first 64 KiB (``_encoding``);
- lines (JSONL) and rows (CSV) of at most 64 MiB (``_text.MAX_LINE_BYTES``); the file may be larger;
- JSON as JSON allows: big integers kept exact, lone-surrogate escapes read as U+FFFD;
  NaN/Infinity and nesting beyond about 1,000 levels are errors;
- CSV with a header of unique, non-empty names and one cell per column in every row; the
  delimiter is ``,`` (``.tsv``: tab) unless ``delimiter`` says otherwise;
- Parquet (``.parquet``) when pyarrow is installed (``assay[arrow]``), rows numbered from 1.

An empty dataset (no rows) loads as ``[]``; whether that is an error is the suite's call.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, BinaryIO

from pydantic import ValidationError

from assay.core.errors import SpecError
from assay.core.messages import Phrase
from assay.core.sample import Sample
from assay.core.untrusted import MAX_DEPTH, clean_text
from assay.runner.dataset._csv import DELIMITERS, csv_header, csv_metadata, csv_rows
from assay.runner.dataset._json import BadJson, json_rows, jsonl_rows, parse_json
from assay.runner.dataset._parquet import parquet_rows, untrusted_parquet_rows
from assay.runner.files import open_regular

# The readers are public too: the Ray engine and the suites read rows of these formats themselves.
__all__ = ["DELIMITERS", "DUPLICATE_AT", "SAMPLE_FIELDS", "BadJson", "check_outputs", "csv_header", "csv_metadata",
           "csv_rows", "duplicate_error", "has_output", "iter_dataset", "iter_samples", "jsonl_rows", "load_dataset",
           "parse_json", "read_rows", "sample_from_row", "samples_from_rows", "FORMATS"]

SAMPLE_FIELDS = frozenset(Sample.model_fields)
FORMATS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json", ".csv": "csv", ".tsv": "csv",
           ".parquet": "parquet"}
"""The format of a dataset file by its suffix."""


def load_dataset(path: Path, *, delimiter: str | None = None) -> list[Sample]:
    """Read a dataset; raises SpecError with ``file:line`` on the first bad row or duplicate id.

    ``delimiter`` (one of ``DELIMITERS``: ``,``, ``;``, ``tab`` or ``\\t``, ``|``) applies to CSV
    and TSV files and is ignored for JSON ones, so a suite's setting does not break a JSONL file
    given in its place.
    """
    return _unique(iter_dataset(path, delimiter=delimiter), str(path))


def iter_dataset(path: Path, *, delimiter: str | None = None) -> Iterator[tuple[int, Sample]]:
    """``(line, sample)`` pairs of a dataset file, read as they are used: a block of lines (a
    Parquet batch) at a time, so a large file is never held. A ``.json`` file (one list) is
    the exception: its text is read whole, its rows built one at a time. Ids are not checked
    for uniqueness here (``load_dataset`` and ``runner.local_engine.stream.DatasetStream`` do it).
    SpecError with ``file:line`` on a bad row."""
    path = Path(path)
    with open_regular(path, what="dataset file") as fh:
        rows = read_rows(fh, path, delimiter=delimiter)
        # Parquet's typed columns are not text: cleaned (depth) like inline rows
        yield from iter_samples(rows, source=str(path), clean=FORMATS.get(path.suffix.lower()) == "parquet")


def read_rows(fh: BinaryIO, path: Path, *, delimiter: str | None = None,
              untrusted: bool = False, max_row_bytes: int = 1 << 20,
              on_encoding: Callable[[str], None] | None = None,
              rename: dict[str, str] | None = None) -> Iterator[tuple[int, Any]]:
    """The ``(line, row)`` pairs of an open dataset file, its format told by ``path``'s suffix
    (``path`` names the file in messages; a Parquet ``fh`` must be seekable), read as they are
    asked for (a ``.json`` file's text is read whole). The API's uploads read request bodies so,
    ``untrusted``: a Parquet file is then decoded in a child process with a memory limit, sized
    for rows of at most ``max_row_bytes``. A CSV file's text encoding is told from its first bytes
    (``_encoding``) and handed to ``on_encoding`` before its first row; ``rename`` maps its
    header's columns to fields (``{"问题": "input"}``)."""
    fmt = FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise SpecError(f"cannot tell the format of dataset {path.name!r} from its name: "
                        "use .jsonl, .ndjson, .csv, .tsv, .json or .parquet", where=str(path))
    sep = _delimiter(delimiter, path)
    if fmt == "jsonl":
        return jsonl_rows(fh, path)
    if fmt == "json":
        return json_rows(fh, path)
    if fmt == "parquet":
        if untrusted:
            return untrusted_parquet_rows(fh, path, max_row_bytes=max_row_bytes)
        return parquet_rows(fh, path)
    return csv_rows(fh, path, sep, on_encoding, rename)


def samples_from_rows(rows: Iterable[tuple[int, Any]], *, source: str, clean: bool = True) -> list[Sample]:
    """Samples from ``(line, row)`` pairs; SpecError naming ``source:line`` on a bad row or duplicate id.

    ``clean`` replaces lone surrogates in the rows' text (YAML can hold them) with U+FFFD and
    refuses nesting deeper than ``MAX_DEPTH``; the dataset readers deliver clean rows and skip it.
    """
    return _unique(iter_samples(rows, source=source, clean=clean), source)


def iter_samples(rows: Iterable[tuple[int, Any]], *, source: str,
                 clean: bool = True) -> Iterator[tuple[int, Sample]]:
    """``(line, sample)`` for each ``(line, row)``, built as they are used (``samples_from_rows``
    without the check that ids differ); SpecError naming ``source:line`` on a bad row."""
    for line, row in rows:
        yield line, sample_from_row(row, f"{source}:{line}", line, clean=clean)


def sample_from_row(row: Any, where: str, line: int, *, clean: bool = True) -> Sample:
    """One row as a Sample (an empty id becomes ``row-<line>``); SpecError at ``where``."""
    if not isinstance(row, dict):
        raise SpecError(f"a row must be an object (id, input, output, ...), got {_kind(row)}", where=where)
    if clean:
        row = _clean(row, MAX_DEPTH, where)
    data = _fold_metadata(row, where)
    if data.get("id") in (None, ""):  # an empty CSV cell or `id: null` is no id
        data = {**data, "id": f"row-{line}"}
    try:
        return Sample.model_validate(data)
    except ValidationError as exc:
        raise SpecError.from_validation(exc, where=where) from None


DUPLICATE = Phrase("dataset.duplicate_id", "duplicate sample id {id} (first on line {first})")
DUPLICATE_AT = Phrase("dataset.duplicate_id_at", "duplicate sample id {id} (first at {first})")


def duplicate_error(sample_id: str, first: int, where: str) -> SpecError:
    """The error for a sample id seen before, on line ``first``."""
    return SpecError(DUPLICATE(id=repr(sample_id), first=first), where=where)


def _unique(numbered: Iterable[tuple[int, Sample]], source: str) -> list[Sample]:
    samples: list[Sample] = []
    seen: dict[str, int] = {}
    for line, sample in numbered:
        if sample.id in seen:
            raise duplicate_error(sample.id, seen[sample.id], f"{source}:{line}")
        seen[sample.id] = line
        samples.append(sample)
    return samples


def has_output(sample: Sample) -> bool:
    """True when ``sample`` has something to grade: an output, a transcript or a workspace."""
    return sample.output is not None or bool(sample.transcript) or bool(sample.workspace)


def check_outputs(samples: Iterable[Sample], where: str) -> None:
    """A dataset where no row has anything to grade is a mistake (a misnamed column), not
    a run in which every sample fails: SpecError naming the columns of the first rows."""
    first: list[Sample] = []
    for sample in samples:
        if has_output(sample):
            return
        if len(first) < 100:
            first.append(sample)
    if not first:
        return
    columns = sorted({k for s in first for k in s.metadata})
    hint = f"; its columns are: {', '.join(columns[:20])}" if columns else ""
    raise SpecError(f"no row has an `output` (nor a transcript or workspace) to grade{hint}", where=where)


def _delimiter(delimiter: str | None, path: Path) -> str:
    if delimiter is None:
        return "\t" if path.suffix.lower() == ".tsv" else ","
    if delimiter not in DELIMITERS:
        raise SpecError(f"delimiter {delimiter!r} is not supported: use ',', ';', tab or '|'")
    return DELIMITERS[delimiter]


def _fold_metadata(row: dict[str, Any], where: str) -> dict[str, Any]:
    extra = {k: v for k, v in row.items() if k not in SAMPLE_FIELDS}
    if not extra:
        return row
    data = {k: v for k, v in row.items() if k in SAMPLE_FIELDS}
    meta = data.get("metadata") or {}
    if not isinstance(meta, dict):
        raise SpecError("metadata: must be an object", where=where)
    data["metadata"] = {**extra, **meta}
    return data


def _clean(value: Any, depth: int, where: str) -> Any:
    if isinstance(value, str):
        return value if value.isascii() else clean_text(value)  # isascii is a flag check: no scan
    if isinstance(value, (dict, list)):
        if depth <= 0:
            raise SpecError(f"nested more than {MAX_DEPTH} levels deep", where=where)
        if isinstance(value, dict):
            return {_clean(k, 0, where) if isinstance(k, str) else k: _clean(v, depth - 1, where)
                    for k, v in value.items()}
        return [_clean(v, depth - 1, where) for v in value]
    return value


def _kind(value: Any) -> str:
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool) or value is None:
        return "true/false/null"
    return "a number" if isinstance(value, (int, float)) else type(value).__name__
