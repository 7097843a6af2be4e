"""What a Ray run reads: the suite without its samples, and the dataset as Ray Data blocks.

An assay suite whose dataset is a JSONL, CSV/TSV or Parquet file is *streamed*: the driver
compiles the graders only, and Ray Data reads the file in blocks on the workers, so no
process ever holds the whole dataset. Any other suite (inline samples, a ``.json`` dataset,
waza and Vally suites, whose samples are assembled from several files) is loaded as the
local engine loads it and its samples are shipped to the workers once.

The blocks keep assay's reading rules rather than Ray's type inference: JSONL lines are read
as text and parsed by assay's JSON parser (exact integers, the same objects), CSV cells stay
text as assay's CSV reader leaves them. Line numbers are not tracked across blocks, so the
Ray engine needs an ``id`` on every row; an id repeated in two blocks is refused by the driver
when the second one is graded (``_driver._check_unique``), not when the file is opened.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from assay.core.context import SpecContext
from assay.core.errors import SpecError
from assay.runner.dataset import csv_rows
from assay.runner.files import open_regular
from assay.runner.suites import Suite
from assay.runner.suites.streamed import delimiter_of, open_streamed

Kind = Literal["jsonl", "csv", "parquet", "memory"]
STREAMED: dict[str, Kind] = {".jsonl": "jsonl", ".ndjson": "jsonl", ".csv": "csv", ".tsv": "csv",
                             ".parquet": "parquet"}


@dataclass(slots=True)
class Source:
    """Where a run's samples come from: a streamed file (``path``, read in blocks) or the
    loaded suite's own ``samples`` (``kind == "memory"``)."""

    kind: Kind
    path: Path | None = None
    delimiter: str = ","
    columns: list[str] = field(default_factory=list)
    """A CSV file's header, so that every column is read as text."""

    @property
    def where(self) -> str:
        return str(self.path) if self.path is not None else "inline samples"


@dataclass(frozen=True, slots=True)
class SuiteRef:
    """How to open a suite again on a worker: compiled graders hold compiled patterns that do
    not pickle, so each worker compiles the suite file itself (absolute paths, so that the
    worker's directory does not matter), with the command line's overrides applied, and the
    waza release it is read as (``--waza-version``), so that every worker reads the suite as the
    driver did."""

    path: Path
    results: Path | None = None
    dialect: str | None = None
    threshold: float | None = None
    cost_ordered: bool | None = None
    waza_version: str | None = None

    @classmethod
    def of(cls, path: Path, *, results: Path | None = None, dialect: str | None = None,
           threshold: float | None = None, cost_ordered: bool | None = None,
           waza_version: str | None = None) -> SuiteRef:
        return cls(Path(path).resolve(), Path(results).resolve() if results is not None else None, dialect,
                   threshold, cost_ordered, waza_version)

    def open(self, context: SpecContext | None = None) -> tuple[Suite, Source]:
        """The suite (overrides applied) and its source, as ``open_suite`` reads them."""
        suite, source = open_suite(self.path, results=self.results, dialect=self.dialect, context=context,
                                   waza_version=self.waza_version)
        if self.threshold is not None:
            suite.threshold = self.threshold
        if self.cost_ordered is not None:
            suite.cost_ordered = self.cost_ordered
        return suite, source


def open_suite(path: Path, *, results: Path | None = None, dialect: str | None = None,
               context: SpecContext | None = None, waza_version: str | None = None) -> tuple[Suite, Source]:
    """The suite at ``path`` and the source of its samples. A streamed suite comes back with
    no samples; everything else about it (graders, threshold, fingerprint) is as ``load_suite``
    gives it."""
    suite, source_path = open_streamed(path, formats=STREAMED, results=results, dialect=dialect, context=context,
                                       waza_version=waza_version)
    if source_path is None:
        return suite, Source("memory")
    kind = STREAMED[source_path.suffix.lower()]
    delimiter = delimiter_of(suite, source_path)
    columns = _csv_header(source_path, delimiter) if kind == "csv" else []
    if kind != "csv":
        open_regular(source_path, what="dataset file").close()  # a clear error for a missing file, here
    return suite, Source(kind, source_path, delimiter, columns)


def _csv_header(path: Path, delimiter: str) -> list[str]:
    """The header of a CSV file, checked as assay's reader checks it (first row included)."""
    with open_regular(path, what="dataset file") as fh:
        first: Any = next(csv_rows(fh, path, delimiter), None)
    if first is None:
        raise SpecError("no samples to grade (the dataset is empty)", where=str(path))
    return list(first[1])


def read_blocks(source: Source, suite: Suite, *, num_cpus: float = 1.0) -> Any:
    """The samples as a Ray Dataset: lines (``text``), rows, or indices into ``suite.samples``;
    each read task asks for ``num_cpus``."""
    import ray.data

    if source.kind == "memory":
        return ray.data.range(len(suite.samples))
    path = str(source.path)
    if source.kind == "jsonl":
        return ray.data.read_text(path, drop_empty_lines=True, num_cpus=num_cpus)
    if source.kind == "parquet":
        return ray.data.read_parquet(path, num_cpus=num_cpus)
    import pyarrow as pa
    from pyarrow import csv as pa_csv

    return ray.data.read_csv(
        path, file_extensions=None, num_cpus=num_cpus,
        parse_options=pa_csv.ParseOptions(delimiter=source.delimiter, newlines_in_values=True),
        convert_options=pa_csv.ConvertOptions(column_types={c: pa.string() for c in source.columns},
                                              strings_can_be_null=False, quoted_strings_can_be_null=False))
