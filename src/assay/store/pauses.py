"""Evaluators paused in a run: one that timed out on the last ``after`` samples it graded in a
run (a busy loop, a call that never answers) is not sent to the sandbox again in that run until
the run's owner resumes it, so a runaway evaluator costs ``after`` time limits, not one per
sample.

The pause is a row of ``run_pauses``, so every server of the database sees it, and it survives
a restart: a paused run stays active (its slices done but its paused evaluator's samples not)
and is neither finished nor graded further until a resume, which clears the pause, counts that
evaluator's timeouts afresh (only results stored after the resume) and reopens the run's slices.
The results already stored are kept; a reopened slice grades only what it lacks.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import ColumnElement, func, select, update
from sqlalchemy.orm import Session

from assay.core.result import ErrorCode
from assay.store.db import dialect_insert
from assay.store.models import EvaluationResult, Run, RunPause, RunSlice, SliceState, utcnow


@dataclass(frozen=True, slots=True)
class Pause:
    """An evaluator paused in a run: since when, after how many timeouts in a row."""

    evaluator_id: str
    paused_at: datetime
    timeouts: int


def note_timeouts(session: Session, run_id: str, evaluator_id: str, after: int) -> bool:
    """Call after storing results of the evaluator in the session's transaction: pause it when
    its last ``after`` results counted (since its last resume) are all timeouts. Returns whether
    it is paused now."""
    if after < 1:
        return False
    pause = session.get(RunPause, (run_id, evaluator_id))
    since = pause.counted_after if pause is not None else 0
    codes = list(session.scalars(
        select(EvaluationResult.error_code)
        .where(EvaluationResult.run_id == run_id, EvaluationResult.evaluator_id == evaluator_id,
               EvaluationResult.id > since)
        .order_by(EvaluationResult.id.desc()).limit(after)))
    if len(codes) < after or any(code != ErrorCode.TIMEOUT.value for code in codes):
        return pause is not None and pause.paused_at is not None
    session.execute(dialect_insert(session, RunPause.__table__).values(
        run_id=run_id, evaluator_id=evaluator_id, paused_at=None, timeouts=0, counted_after=0)
        .on_conflict_do_nothing(index_elements=["run_id", "evaluator_id"]))
    session.execute(update(RunPause).where(RunPause.run_id == run_id, RunPause.evaluator_id == evaluator_id,
                                           RunPause.paused_at.is_(None))
                    .values(paused_at=utcnow(), timeouts=after).execution_options(synchronize_session=False))
    return True


def paused(session: Session, run_id: str) -> list[Pause]:
    """The run's paused evaluators, first paused first."""
    query = (select(RunPause.evaluator_id, RunPause.paused_at, RunPause.timeouts)
             .where(RunPause.run_id == run_id, RunPause.paused_at.is_not(None)).order_by(RunPause.paused_at))
    return [Pause(evaluator_id, at, timeouts) for evaluator_id, at, timeouts in session.execute(query).all()
            if at is not None]


def has_pause() -> ColumnElement[bool]:
    """A condition on ``Run``: one of its evaluators is paused."""
    return select(RunPause.run_id).where(RunPause.run_id == Run.id, RunPause.paused_at.is_not(None)).exists()


def resume(session: Session, run_id: str, evaluator_id: str | None = None) -> list[str]:
    """Resume the run's paused evaluators (or only ``evaluator_id``): their timeouts count again
    from the run's next result, and the run's done slices are reopened, so that the queue grades
    what the paused evaluators left (and nothing else: a slice grades only what it lacks).
    Returns the ids of the evaluators resumed."""
    which = [RunPause.run_id == run_id, RunPause.paused_at.is_not(None)]
    if evaluator_id is not None:
        which.append(RunPause.evaluator_id == evaluator_id)
    resumed = list(session.scalars(select(RunPause.evaluator_id).where(*which)))
    if not resumed:
        return []
    last = session.scalar(select(func.max(EvaluationResult.id)).where(EvaluationResult.run_id == run_id)) or 0
    session.execute(update(RunPause).where(RunPause.run_id == run_id, RunPause.evaluator_id.in_(resumed))
                    .values(paused_at=None, counted_after=last).execution_options(synchronize_session=False))
    session.execute(update(RunSlice).where(RunSlice.run_id == run_id, RunSlice.state == SliceState.DONE)
                    .values(state=SliceState.PENDING, holder=None, lease_until=None)
                    .execution_options(synchronize_session=False))
    return resumed
