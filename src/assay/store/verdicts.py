"""A run's verdict table (``verdict_models.RunVerdictPart``) and what checks it against the
run's results: written in the transaction that reads the results it comes from, read only
whole (parts 0…n-1, the last one final), and taken as current only while the run's results
count per status as they did when it was written (``status_counts``). Results are only ever
inserted (never updated: ``store.runs``), so a result added since, such as one stored by a
slice still grading after a cancel, changes those counts and the table is written again."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from sqlalchemy import delete, func, insert, select
from sqlalchemy.orm import Session

from assay.store.models import EvaluationResult, utcnow
from assay.store.verdict_models import RunVerdictPart

PART_SAMPLES = 50_000
"""The most samples one part holds (a run of millions is written and read part by part)."""


def status_counts(session: Session, run_id: str) -> dict[str, int]:
    """How many results the run has of each status: counted in its ``(run, status)`` index."""
    query = (select(EvaluationResult.status, func.count()).where(EvaluationResult.run_id == run_id)
             .group_by(EvaluationResult.status))
    return {status: int(count) for status, count in session.execute(query).all()}


def clear(session: Session, run_id: str) -> None:
    """Drop the run's verdict table: before it is written again, or when a result of the run
    changes (nothing changes a stored result today)."""
    session.execute(delete(RunVerdictPart).where(RunVerdictPart.run_id == run_id))


def add_part(session: Session, run_id: str, number: int, samples: int, body: bytes, *, final: bool) -> None:
    """Add part ``number`` of the run's table (``final``: the last). Nothing is committed here:
    the caller's transaction holds the parts and the results they were read from together."""
    # A plain insert, not an ORM object: the session keeps no part's bytes once it is sent.
    session.execute(insert(RunVerdictPart).values(run_id=run_id, part=number, samples=samples, final=final,
                                                  body=body, created_at=utcnow()))


def read(session: Session, run_id: str) -> list[bytes] | None:
    """The run's parts in order, or None when it has no whole table (none, or parts without
    their final one, or a gap)."""
    rows: Sequence[tuple[int, bool, bytes]] = session.execute(
        select(RunVerdictPart.part, RunVerdictPart.final, RunVerdictPart.body)
        .where(RunVerdictPart.run_id == run_id).order_by(RunVerdictPart.part)).all()
    if not rows or [r[0] for r in rows] != list(range(len(rows))):
        return None
    if not rows[-1][1] or any(final for _, final, _ in rows[:-1]):
        return None
    return [bytes(body) for _, _, body in rows]


def unpassed(session: Session, run_id: str, sample_ids: Sequence[str], *,
             batch: int = 500) -> Iterator[tuple[str, str, str, str | None, str | None, dict[str, Any] | None]]:
    """The results of samples ``sample_ids`` of the run that did not pass, in stored order per
    sample: ``(sample id, evaluator id, status, reason, reason code, reason args)``, looked up
    ``batch`` samples at a time in the (run, sample, evaluator) index."""
    r = EvaluationResult
    for start in range(0, len(sample_ids), batch):
        query = (select(r.sample_id, r.evaluator_id, r.status, r.reason, r.reason_code, r.reason_args)
                 .where(r.run_id == run_id, r.sample_id.in_(sample_ids[start:start + batch]), r.status != "passed")
                 .order_by(r.sample_index, r.id))
        yield from session.connection().execute(query).all()  # plain rows, fetched at once
