"""Online jobs in the run queue (``store.queue``): a claim that serves a user's online work
takes up to ``limit`` of their due jobs into a new online slice (a ``run_slices`` row of kind
online, no run, leased to the claiming server) or takes over an online slice whose lease
passed or that a stopping server gave back. The slice carries the lease: heartbeats renew it,
a stop gives it back, a dead server's is taken over when it expires, as a run's slice.

A job is ``pending`` until a claim takes it (``leased``, ``slice_id`` set, in the same
transaction as the slice's insert; on PostgreSQL after ``FOR UPDATE SKIP LOCKED``, so claims at
once take different jobs) and ``done`` once its results are committed, with the slice marked
done in the same transaction. Done online slices are only kept to say when a user was last
served; ``purge_done`` deletes those older than a while.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any, cast

from sqlalchemy import ColumnElement, CursorResult, and_, delete, func, insert, select, update
from sqlalchemy.orm import Session

from assay.store.models import RunSlice, SliceKind, SliceState, takeable_slice
from assay.store.online_models import JobState, OnlineJob


def claimable_slice(now: datetime) -> ColumnElement[bool]:
    """An online slice any server may take: given back, or leased past its lease."""
    return and_(RunSlice.kind == SliceKind.ONLINE.value, takeable_slice(now))


def _due(now: datetime) -> ColumnElement[bool]:
    return and_(OnlineJob.state == JobState.PENDING.value, OnlineJob.ready.is_(True), OnlineJob.due_at <= now)


def waiting(session: Session, now: datetime) -> dict[str, datetime | None]:
    """Users with online work to claim, each with when the oldest of it was due."""
    found: dict[str, datetime | None] = {user: oldest for user, oldest in session.execute(
        select(OnlineJob.user_id, func.min(OnlineJob.due_at)).where(_due(now)).group_by(OnlineJob.user_id)).all()}
    for (user,) in session.execute(select(RunSlice.user_id).where(claimable_slice(now)).distinct()):
        found.setdefault(user, None)
    return found


def served(session: Session, users: Sequence[str]) -> dict[str, datetime | None]:
    """When each user's last online slice was claimed (kept while its done slice is)."""
    return {user: at for user, at in session.execute(select(RunSlice.user_id, func.max(RunSlice.claimed_at)).where(
        RunSlice.kind == SliceKind.ONLINE.value, RunSlice.user_id.in_(list(users)),
        RunSlice.claimed_at.is_not(None)).group_by(RunSlice.user_id)).all()}


def claim(session: Session, user: str, holder: str, lease_s: float, now: datetime, limit: int,
          skip_locked: bool) -> tuple[int, int] | None:
    """Lease an online slice of ``user`` for ``holder``: one to take over, else a new one of up
    to ``limit`` due jobs; returns ``(slice id, jobs)``, or None when there is none."""
    lease = {"state": SliceState.LEASED, "holder": holder, "lease_until": now + timedelta(seconds=lease_s),
             "claimed_at": now}
    query = select(RunSlice.id, RunSlice.stop).where(RunSlice.user_id == user, claimable_slice(now)) \
        .order_by(RunSlice.id).limit(1)
    if skip_locked:
        query = query.with_for_update(skip_locked=True)
    for slice_id, jobs in session.execute(query).all():
        taken = cast(CursorResult[Any], session.execute(
            update(RunSlice).where(RunSlice.id == slice_id, claimable_slice(now))
            .values(**lease, attempts=RunSlice.attempts + 1).execution_options(synchronize_session=False)))
        if taken.rowcount == 1:
            return slice_id, jobs
    jobs_query = select(OnlineJob.id).where(OnlineJob.user_id == user, _due(now)) \
        .order_by(OnlineJob.due_at, OnlineJob.id).limit(limit)
    if skip_locked:
        jobs_query = jobs_query.with_for_update(skip_locked=True)
    ids = list(session.scalars(jobs_query))
    if not ids:
        return None
    slice_id = session.execute(insert(RunSlice).values(
        run_id=None, user_id=user, kind=SliceKind.ONLINE.value, start=0, stop=len(ids), attempts=1, **lease)
        .returning(RunSlice.id)).scalar_one()
    moved = cast(CursorResult[Any], session.execute(
        update(OnlineJob).where(OnlineJob.id.in_(ids), OnlineJob.state == JobState.PENDING.value)
        .values(state=JobState.LEASED.value, slice_id=slice_id, attempts=OnlineJob.attempts + 1)
        .execution_options(synchronize_session=False))).rowcount
    if moved == 0:  # taken meanwhile by another server
        session.execute(delete(RunSlice).where(RunSlice.id == slice_id))
        return None
    if moved != len(ids):
        session.execute(update(RunSlice).where(RunSlice.id == slice_id).values(stop=moved))
    return slice_id, moved


def jobs_of(session: Session, slice_id: int) -> list[OnlineJob]:
    """The slice's jobs not graded yet, oldest first."""
    return list(session.scalars(select(OnlineJob).where(OnlineJob.slice_id == slice_id,
                                                        OnlineJob.state == JobState.LEASED.value)
                                .order_by(OnlineJob.due_at, OnlineJob.id)))


def finish(session: Session, slice_id: int, job_ids: Sequence[int]) -> None:
    """The jobs' results are in this transaction: mark them and their slice done."""
    if job_ids:
        session.execute(update(OnlineJob).where(OnlineJob.id.in_(list(job_ids)), OnlineJob.slice_id == slice_id)
                        .values(state=JobState.DONE.value).execution_options(synchronize_session=False))
    session.execute(update(RunSlice).where(RunSlice.id == slice_id)
                    .values(state=SliceState.DONE, lease_until=None).execution_options(synchronize_session=False))


def purge_done(session: Session, before: datetime) -> int:
    """Delete the done online slices claimed before ``before``; returns how many."""
    gone = cast(CursorResult[Any], session.execute(
        delete(RunSlice).where(RunSlice.kind == SliceKind.ONLINE.value, RunSlice.state == SliceState.DONE,
                               RunSlice.claimed_at < before).execution_options(synchronize_session=False)))
    return int(gone.rowcount or 0)
