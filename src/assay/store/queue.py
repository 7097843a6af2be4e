"""The run queue: a run's samples in slices that any server of the database leases, grades
and marks done. Nothing but the database is shared, so servers may sit on any hosts.

A slice is ``pending`` until a server claims it: the claim sets ``leased``, the holder and
``lease_until``, in one conditional statement (on PostgreSQL after ``SELECT … FOR UPDATE SKIP
LOCKED``, so servers claiming at once take different slices without waiting on each other; on
SQLite, whose writers take turns, the condition alone makes a single holder). The holder's
heartbeats push ``lease_until`` back; a server that dies stops them, and once the time passes
any server may claim the slice again. The results themselves are unique per (run, sample,
evaluator) and inserted "ignore if present", so a slice graded twice (its first holder was
only slow, not dead) still stores each result once.

Online rules' jobs are in the same queue (``store.online_queue``): a claim for a user with due
online jobs cuts them into an online slice (no run), leased, renewed, given back and taken over
as a run's slice.

Users are served in turn, across both kinds of work: a claim goes to the user with the fewest
slices leased now, then to the one served longest ago, so one user's large run (or flood of
spans) delays another's small one by at most the slice each busy server is grading. A user
with both kinds of work has them served in turn the same way.

Times are this host's clock (UTC); servers sharing a queue are expected to keep theirs in sync
(NTP), well within the lease.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any, cast

from sqlalchemy import ColumnElement, CursorResult, and_, func, insert, select, update
from sqlalchemy.orm import Session

from assay.store import online_queue
from assay.store.models import ACTIVE_STATES, Run, RunSlice, RunState, SliceKind, SliceState, takeable_slice, utcnow
from assay.store.pauses import has_pause

ONLINE_SLICE = 64
"""The most online jobs one online slice takes."""


@dataclass(frozen=True, slots=True)
class Claim:
    """A slice this server holds: grade samples ``start`` <= index < ``stop`` of ``run_id``."""

    id: int
    run_id: str
    user_id: str
    start: int
    stop: int


@dataclass(frozen=True, slots=True)
class OnlineClaim:
    """An online slice this server holds: grade its ``jobs`` online jobs (``store.online_queue``)."""

    id: int
    user_id: str
    jobs: int


def plan(session: Session, run_id: str, user_id: str | None, samples: int, size: int) -> int:
    """Cut a run of ``samples`` samples into pending slices of ``size``; returns how many."""
    rows = [{"run_id": run_id, "user_id": user_id or "", "start": start, "stop": min(start + size, samples),
             "state": SliceState.PENDING, "attempts": 0} for start in range(0, samples, size)]
    for first in range(0, len(rows), 1000):
        session.execute(insert(RunSlice), rows[first:first + 1000])
    return len(rows)


def unplanned_runs(session: Session) -> list[Run]:
    """Queued or running runs that have no slice at all (queued before the queue existed)."""
    planned = select(RunSlice.id).where(RunSlice.run_id == Run.id).exists()
    return list(session.scalars(select(Run).where(Run.status.in_(ACTIVE_STATES), ~planned)))


def _claimable(now: datetime) -> ColumnElement[bool]:
    return and_(Run.status.in_(ACTIVE_STATES), takeable_slice(now))


def _users_in_turn(session: Session, now: datetime, online: bool = True) -> list[tuple[str, list[SliceKind]]]:
    """Users with a slice to claim (or online jobs due), the one to serve first first: fewest
    slices leased now (both kinds), then served longest ago, then waiting longest; each with
    the kinds of work they have, the kind to serve first first (fewer leased, then served
    longer ago)."""
    runs = {user: _aware(oldest) for user, oldest in session.execute(
        select(RunSlice.user_id, func.min(Run.created_at)).join(Run, Run.id == RunSlice.run_id)
        .where(_claimable(now)).group_by(RunSlice.user_id)).all()}
    due = {user: _aware(oldest) for user, oldest in online_queue.waiting(session, now).items()} if online else {}
    waiting = {user: min((t for t in (runs.get(user), due.get(user)) if t is not None), default=None)
               for user in runs.keys() | due.keys()}
    kinds = {user: [kind for kind, has in ((SliceKind.RUN, user in runs), (SliceKind.ONLINE, user in due)) if has]
             for user in waiting}
    both = [user for user in waiting if len(kinds[user]) == 2]
    if len(waiting) < 2 and not both:
        return [(user, kinds[user]) for user in waiting]
    leased: dict[tuple[str, str], int] = {(user, kind): count for user, kind, count in session.execute(
        select(RunSlice.user_id, RunSlice.kind, func.count()).where(
            RunSlice.state == SliceState.LEASED, RunSlice.lease_until >= now, RunSlice.user_id.in_(list(waiting)))
        .group_by(RunSlice.user_id, RunSlice.kind)).all()}
    run_served = session.execute(
        select(RunSlice.user_id, func.max(RunSlice.claimed_at)).join(Run, Run.id == RunSlice.run_id)
        .where(Run.status.in_(ACTIVE_STATES), RunSlice.user_id.in_(list(waiting))).group_by(RunSlice.user_id)).all()
    served = {(user, SliceKind.RUN.value): _aware(at) for user, at in run_served}
    served |= {(user, SliceKind.ONLINE.value): _aware(at)
               for user, at in online_queue.served(session, list(waiting)).items()}
    epoch = datetime.min.replace(tzinfo=now.tzinfo)

    def last(user: str, kind: str) -> datetime:
        return served.get((user, kind)) or epoch

    def order(user: str) -> tuple[int, datetime, datetime]:
        count = sum(leased.get((user, kind.value), 0) for kind in SliceKind)
        return count, max(last(user, kind.value) for kind in SliceKind), waiting[user] or epoch

    for user in both:
        kinds[user].sort(key=lambda kind: (leased.get((user, kind.value), 0), last(user, kind.value)))
    return [(user, kinds[user]) for user in sorted(waiting, key=order)]


def claim(session: Session, holder: str, lease_s: float, online: bool = True,
          online_limit: int = ONLINE_SLICE) -> Claim | OnlineClaim | None:
    """Lease the next slice for ``holder`` (fair between users, across task runs and online
    work: an online slice of up to ``online_limit`` jobs; ``online=False``: runs' slices
    only), or None when there is none."""
    now = utcnow()
    skip_locked = session.get_bind().dialect.name == "postgresql"
    for user, kinds in _users_in_turn(session, now, online):
        for kind in kinds:
            if kind == SliceKind.ONLINE:
                batch = online_queue.claim(session, user, holder, lease_s, now, online_limit, skip_locked)
                if batch is not None:
                    return OnlineClaim(batch[0], user, batch[1])
                continue
            found = _claim_run_slice(session, user, holder, lease_s, now, skip_locked)
            if found is not None:
                return found
    return None


def _claim_run_slice(session: Session, user: str, holder: str, lease_s: float, now: datetime,
                     skip_locked: bool) -> Claim | None:
    query = (select(RunSlice).join(Run, Run.id == RunSlice.run_id)
             .where(RunSlice.user_id == user, _claimable(now))
             .order_by(Run.created_at, RunSlice.run_id, RunSlice.start).limit(1))
    if skip_locked:
        query = query.with_for_update(skip_locked=True, of=RunSlice)
    found = session.scalars(query).first()
    if found is None or found.run_id is None:
        return None  # taken meanwhile by another server
    taken = cast(CursorResult[Any], session.execute(  # an UPDATE's result: a CursorResult
        update(RunSlice).where(RunSlice.id == found.id, takeable_slice(now))
        .values(state=SliceState.LEASED, holder=holder, lease_until=now + timedelta(seconds=lease_s),
                claimed_at=now, attempts=RunSlice.attempts + 1)
        .execution_options(synchronize_session=False)))
    if taken.rowcount != 1:
        return None
    session.execute(update(Run).where(Run.id == found.run_id, Run.status == RunState.QUEUED.value)
                    .values(status=RunState.RUNNING.value, started_at=now))
    return Claim(found.id, found.run_id, found.user_id, found.start, found.stop)


def renew(session: Session, holder: str, slice_ids: list[int], lease_s: float) -> set[int]:
    """Push back the leases ``holder`` still has among ``slice_ids``; returns those ids (a
    slice missing from the answer was taken over: its holder must stop grading it)."""
    if not slice_ids:
        return set()
    session.execute(update(RunSlice).where(RunSlice.id.in_(slice_ids), RunSlice.holder == holder,
                                           RunSlice.state == SliceState.LEASED)
                    .values(lease_until=utcnow() + timedelta(seconds=lease_s))
                    .execution_options(synchronize_session=False))
    return set(session.scalars(select(RunSlice.id).where(RunSlice.id.in_(slice_ids), RunSlice.holder == holder,
                                                         RunSlice.state == SliceState.LEASED)))


def finish(session: Session, slice_id: int) -> None:
    """Mark a slice done (its results are committed)."""
    session.execute(update(RunSlice).where(RunSlice.id == slice_id)
                    .values(state=SliceState.DONE, lease_until=None)
                    .execution_options(synchronize_session=False))


def give_back(session: Session, holder: str, slice_ids: list[int] | None = None) -> None:
    """Return ``holder``'s leased slices (or those of ``slice_ids``) to the queue at once: a
    server that stops cleanly lets another take over without waiting for the lease to expire."""
    statement = update(RunSlice).where(RunSlice.holder == holder, RunSlice.state == SliceState.LEASED)
    if slice_ids is not None:
        statement = statement.where(RunSlice.id.in_(slice_ids))
    session.execute(statement.values(state=SliceState.PENDING, holder=None, lease_until=None)
                    .execution_options(synchronize_session=False))


def remaining(session: Session, run_id: str) -> int:
    """Slices of the run not done yet."""
    return session.scalar(select(func.count()).where(RunSlice.run_id == run_id,
                                                     RunSlice.state != SliceState.DONE)) or 0


def unfinished_runs(session: Session) -> list[Run]:
    """Queued or running runs whose slices are all done: the server that finished the last one
    died before it marked the run finished (two separate commits, so that servers finishing the
    last slices at once each see the others' done). A run with a paused evaluator waits for its
    resume (``store.pauses``)."""
    planned = select(RunSlice.id).where(RunSlice.run_id == Run.id).exists()
    open_slice = select(RunSlice.id).where(RunSlice.run_id == Run.id, RunSlice.state != SliceState.DONE).exists()
    return list(session.scalars(select(Run).where(Run.status.in_(ACTIVE_STATES), planned, ~open_slice,
                                                  ~has_pause())))


def done_slices(session: Session, run_id: str) -> list[tuple[int, int, int]]:
    """``(slice id, start, stop)`` of the run's slices whose results are all committed."""
    query = select(RunSlice.id, RunSlice.start, RunSlice.stop).where(RunSlice.run_id == run_id,
                                                                    RunSlice.state == SliceState.DONE)
    return [(i, start, stop) for i, start, stop in session.execute(query).all()]


def leased_slices(session: Session, run_id: str) -> list[tuple[int, int]]:
    """``(start, stop)`` of the run's slices being graded now (leased), in order."""
    query = select(RunSlice.start, RunSlice.stop).where(RunSlice.run_id == run_id, RunSlice.state == SliceState.LEASED)
    return sorted((start, stop) for start, stop in session.execute(query).all())


def _aware(moment: datetime | None) -> datetime | None:
    """SQLite gives back naive datetimes (stored as UTC)."""
    if moment is not None and moment.tzinfo is None:
        from datetime import UTC

        return moment.replace(tzinfo=UTC)
    return moment
