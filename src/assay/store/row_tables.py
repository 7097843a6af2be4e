"""Where a dataset version's rows are stored, and how an upload writes them there.

SQLite keeps every version's rows in ``dataset_rows``, keyed by (version, position) with the
sample id unique per version, each key kept up to date row by row: its inserts are cheap.

PostgreSQL keeps each version's rows in a table of its own, ``dataset_rows_<version id's hex>``
(revision 0007), with the columns of ``dataset_rows``. An upload writes them without any index
(``COPY``), and the two keys, position and sample id, are built once, sorted, when the last row
is in (``index_version``): maintaining two text-keyed b-trees row by row cost PostgreSQL two
thirds of an upload's work. A duplicate sample id is then found by that build, and named with
both of its positions. Deleting a version's row drops its table (a statement trigger, whoever
deletes it), which takes no lock on any other version's rows.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, cast

from sqlalchemy import Integer, String, Table, TableClause, Text, column, table
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from assay.core.errors import AssayError
from assay.store.models import SAMPLE_ID_MAX, DatasetRow, is_row_id

PREFIX = "dataset_rows_"
"""A PostgreSQL version's rows table is this followed by the version id's 32 hex digits."""


class DuplicateSample(AssayError, ValueError):
    """A sample id found twice in a version when its keys were built."""

    def __init__(self, sample_id: str, first: int, again: int) -> None:
        super().__init__(f"duplicate sample id {sample_id!r} at positions {first} and {again}")
        self.sample_id, self.first, self.again = sample_id, first, again


def per_version(session: Session) -> bool:
    """Whether each version's rows have a table of their own (PostgreSQL)."""
    return session.get_bind().dialect.name == "postgresql"


def table_name(version_id: str) -> str:
    if not is_row_id(version_id):  # the name is spelt into SQL: only a row id's hex goes there
        raise ValueError(f"not a version id: {version_id!r}")
    return PREFIX + version_id.replace("-", "").lower()


def rows_of(session: Session, version_id: str) -> Table | TableClause:
    """The table holding the version's rows; its ``version_id`` column holds the version's id
    either way, so queries read alike."""
    if not per_version(session):
        return cast(Table, DatasetRow.__table__)
    return table(table_name(version_id), column("version_id", String), column("position", Integer),
                 column("sample_id", String), column("data", Text))


@contextmanager
def gone_as_lookup(version_id: str) -> Iterator[None]:
    """PostgreSQL: a statement on a version's table that another transaction dropped meanwhile
    (the version was deleted after it was looked up, or during its upload) raises LookupError,
    as a version not found, not the driver's missing-table error (SQLSTATE 42P01), whether it
    comes raw from the driver (``COPY``) or wrapped by SQLAlchemy. The caller's transaction is
    then unusable, as after any failed statement."""
    try:
        yield
    except Exception as exc:
        if type(getattr(exc, "orig", None) or exc).__name__ != "UndefinedTable":  # psycopg.errors.UndefinedTable
            raise
        raise LookupError(f"dataset version {version_id} was deleted") from None


def create(session: Session, version_id: str) -> None:
    """PostgreSQL: the version's table, empty and without index (in the version's transaction).
    Its ``version_id`` is a constant default, so ``COPY`` sends three columns, not four."""
    if not per_version(session):
        return
    name = table_name(version_id)
    session.connection().exec_driver_sql(
        f'CREATE TABLE "{name}" (version_id varchar(36) NOT NULL DEFAULT \'{version_id}\' '
        f"CHECK (version_id = '{version_id}'), position integer NOT NULL, "
        f"sample_id varchar({SAMPLE_ID_MAX}) NOT NULL, data text NOT NULL)")


def copy_rows(session: Session, version_id: str, rows: Sequence[tuple[int, str, str]]) -> None:
    """PostgreSQL: ``(position, sample id, JSON text)`` rows into the version's table by ``COPY``,
    sent as one block of text (one Python string per row, not one driver call per row).
    LookupError when the table is gone (its version was deleted during the upload)."""
    import psycopg

    raw: Any = session.connection().connection.driver_connection
    statement = f'COPY "{table_name(version_id)}" (position, sample_id, data) FROM STDIN'
    block = "".join([f"{p}\t{s}\t{d}\n" for p, s, d in rows])
    plain = block.count("\t") == 2 * len(rows) and block.count("\n") == len(rows) and "\\" not in block \
        and "\r" not in block  # else a field holds what COPY's text format escapes: the driver does it
    try:
        with gone_as_lookup(version_id), raw.cursor() as cursor, cursor.copy(statement) as copy:
            if plain:
                copy.write(block)
            else:
                for row in rows:
                    copy.write_row(row)
    except psycopg.IntegrityError as exc:  # as SQLAlchemy's own statements raise it
        raise IntegrityError(statement, None, exc) from exc


def index_version(session: Session, version_id: str) -> None:
    """PostgreSQL: build the version's keys once its rows are in: position (the primary key)
    and sample id (unique). DuplicateSample, naming the first sample id seen twice (by the
    position of its second row) when there is one (the failed build is undone to a savepoint)."""
    if not per_version(session):
        return
    import psycopg

    name = table_name(version_id)
    connection = session.connection()
    connection.exec_driver_sql(f'ALTER TABLE "{name}" ADD PRIMARY KEY (position)')
    try:
        with connection.begin_nested():
            connection.exec_driver_sql(f'CREATE UNIQUE INDEX "{name}_sample" ON "{name}" (sample_id)')
    except IntegrityError as exc:
        if not isinstance(exc.orig, psycopg.errors.UniqueViolation):
            raise
        first = connection.exec_driver_sql(
            f'SELECT sample_id, first, position FROM (SELECT sample_id, position, min(position) OVER '
            f'(PARTITION BY sample_id) AS first FROM "{name}") AS twice WHERE position > first '
            f"ORDER BY position LIMIT 1").one()
        raise DuplicateSample(first[0], first[1], first[2]) from None

