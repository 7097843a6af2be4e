"""Datasets: JSONL, CSV/TSV, JSON or Parquet rows with ``id``, ``input``, ``output``, ``expected``, ``metadata``.

Columns that are not Sample fields go into ``metadata`` (the product spec's "other dataset
fields"). Every error is a SpecError naming ``file:line`` and saying what to do.

What is accepted:

- only a regular file (a FIFO, a device or a directory is refused without blocking);
- UTF-8 text, with or without a BOM (UTF-16/32 and stray bytes are errors naming line and column);
- lines (JSONL) and rows (CSV) of at most 64 MiB (``_text.MAX_LINE_BYTES``); the file may be larger;
- JSON as JSON allows: big integers kept exact, lone-surrogate escapes read as U+FFFD;
  NaN/Infinity and nesting beyond about 1,000 levels are errors;
- CSV with a header of unique, non-empty names and one cell per column in every row; the
  delimiter is ``,`` (``.tsv``: tab) unless ``delimiter`` says otherwise;
- Parquet (``.parquet``) when pyarrow is installed (``assay[arrow]``), rows numbered from 1.

An empty dataset (no rows) loads as ``[]``; whether that is an error is the suite's call.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from assay.core.errors import SpecError
from assay.core.sample import Sample
from assay.core.untrusted import MAX_DEPTH, clean_text
from assay.runner.dataset._csv import DELIMITERS, csv_metadata, csv_rows
from assay.runner.dataset._json import BadJson, json_rows, jsonl_rows, parse_json
from assay.runner.dataset._parquet import parquet_rows
from assay.runner.files import open_regular

# The readers are public too: the Ray engine and the suites read rows of these formats themselves.
__all__ = ["DELIMITERS", "SAMPLE_FIELDS", "BadJson", "csv_metadata", "csv_rows", "jsonl_rows", "load_dataset",
           "parse_json", "samples_from_rows"]

SAMPLE_FIELDS = frozenset(Sample.model_fields)
_FORMATS = {".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json", ".csv": "csv", ".tsv": "csv",
            ".parquet": "parquet"}


def load_dataset(path: Path, *, delimiter: str | None = None) -> list[Sample]:
    """Read a dataset; raises SpecError with ``file:line`` on the first bad row or duplicate id.

    ``delimiter`` (one of ``DELIMITERS``: ``,``, ``;``, ``tab`` or ``\\t``, ``|``) applies to CSV
    and TSV files and is ignored for JSON ones, so a suite's setting does not break a JSONL file
    given in its place.
    """
    path = Path(path)
    fmt = _FORMATS.get(path.suffix.lower())
    sep = _delimiter(delimiter, path)
    with open_regular(path, what="dataset file") as fh:
        if fmt is None:
            raise SpecError(f"cannot tell the format of dataset {path.name!r} from its name: "
                            "use .jsonl, .ndjson, .csv, .tsv, .json or .parquet", where=str(path))
        if fmt == "jsonl":
            rows: Iterable[tuple[int, Any]] = jsonl_rows(fh, path)
        elif fmt == "json":
            rows = json_rows(fh, path)
        elif fmt == "parquet":  # typed columns, not text: cleaned (depth) like inline rows
            return samples_from_rows(parquet_rows(fh, path), source=str(path), clean=True)
        else:
            rows = csv_rows(fh, path, sep)
        return samples_from_rows(rows, source=str(path), clean=False)


def samples_from_rows(rows: Iterable[tuple[int, Any]], *, source: str, clean: bool = True) -> list[Sample]:
    """Samples from ``(line, row)`` pairs; SpecError naming ``source:line`` on a bad row or duplicate id.

    ``clean`` replaces lone surrogates in the rows' text (YAML can hold them) with U+FFFD and
    refuses nesting deeper than ``MAX_DEPTH``; the dataset readers deliver clean rows and skip it.
    """
    samples: list[Sample] = []
    seen: dict[str, int] = {}
    for line, row in rows:
        where = f"{source}:{line}"
        if not isinstance(row, dict):
            raise SpecError(f"a row must be an object (id, input, output, ...), got {_kind(row)}", where=where)
        if clean:
            row = _clean(row, MAX_DEPTH, where)
        data = _fold_metadata(row, where)
        if data.get("id") in (None, ""):  # an empty CSV cell or `id: null` is no id
            data = {**data, "id": f"row-{line}"}
        try:
            sample = Sample.model_validate(data)
        except ValidationError as exc:
            raise SpecError.from_validation(exc, where=where) from None
        if sample.id in seen:
            raise SpecError(f"duplicate sample id {sample.id!r} (first on line {seen[sample.id]})", where=where)
        seen[sample.id] = line
        samples.append(sample)
    return samples


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
