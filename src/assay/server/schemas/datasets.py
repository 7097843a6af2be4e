"""Bodies of ``/api/v1/datasets``: datasets, their versions, and pages of their rows."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from assay.server.schemas.common import ApiModel
from assay.server.schemas.evaluators import Description, Name
from assay.server.schemas.tasks import MAX_INLINE_ROWS


class DatasetCreate(ApiModel):
    """A new dataset; with ``rows``, its version 1 holds them (larger datasets: upload a file to
    ``POST /datasets/{id}/versions``)."""

    name: Name
    description: Description | None = None
    rows: list[dict[str, Any]] | None = Field(default=None, max_length=MAX_INLINE_ROWS,
                                              description="Rows as a dataset file holds them: id, input, output, "
                                                          "expected, metadata; other fields go into metadata.")


class DatasetCopy(ApiModel):
    """``POST /datasets/{id}/copy``: the copy's name (the source's with "(copy)" when left out)."""

    name: Name | None = None


class DatasetUpdate(ApiModel):
    """Changes to a dataset: the fields given replace the stored ones (``description`` null
    clears it; ``name`` may not be null). Its versions and rows never change."""

    name: Name | None = None
    description: Description | None = None


class DatasetVersionOut(ApiModel):
    """One upload of a dataset. ``columns`` are the column names (keys) the rows had, the first
    200; ``sizeBytes`` is the rows' size as stored JSON."""

    number: int
    source_name: str | None
    format: str = Field(description="jsonl, json, csv, parquet, or inline (rows sent as JSON).")
    row_count: int
    size_bytes: int
    columns: list[str]
    created_by_id: str | None
    created_at: str


class DatasetOut(ApiModel):
    """A dataset with its newest version (null before the first upload)."""

    id: str
    name: str
    description: str | None
    latest: DatasetVersionOut | None
    created_by_id: str | None
    owner: str | None = Field(default=None, description="The name of the user who created it (who may change it).")
    created_at: str
    updated_at: str


class DatasetDetail(DatasetOut):
    """A dataset with every version, oldest first, and the tasks that grade it."""

    versions: list[DatasetVersionOut]
    task_names: list[str]


class DatasetRowOut(ApiModel):
    """A row at its position (from 0) in the version: the stored sample."""

    position: int
    row: dict[str, Any]


class DatasetRowPage(ApiModel):
    items: list[DatasetRowOut]
    version: int
    total: int
    limit: int
    offset: int
