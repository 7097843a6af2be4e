"""The run queue on SQLite and PostgreSQL: slices claimed once, users served in turn, an
expired lease taken over, a lost lease reported to its old holder, slices given back, a run
left active by a server that died after its last slice finished by the next."""

from __future__ import annotations

import time
from datetime import timedelta

from service_support import make_api
from sqlalchemy import update

from assay.store import Database, online_queue, queue, upgrade
from assay.store import online as rows
from assay.store import runs as run_rows
from assay.store import tasks as task_rows
from assay.store.models import RunSlice
from assay.store.online_models import OnlineJob, OnlineRule
from assay.store.users import create_user, get_user


def make_run(database: Database, user: str, samples: int, size: int) -> str:
    with database.session() as session:
        owner = create_user(session, user)
        task = task_rows.create_task(session, name="t", description=None, dataset_id=None, evaluators=[],
                                     created_by_id=owner.id)
        return run_rows.create_run(session, task_id=task.id, evaluators=[], samples=samples,
                                   created_by_id=owner.id, slice_size=size).id


def claim(database: Database, holder: str, lease_s: float = 30) -> queue.Claim | None:
    with database.session() as session:
        return queue.claim(session, holder, lease_s)


def test_a_run_is_cut_into_slices_each_claimed_once(database):
    run_id = make_run(database, "alice", 10, 4)
    claims = [claim(database, f"server{n}") for n in range(4)]
    assert [(c.start, c.stop) for c in claims[:3]] == [(0, 4), (4, 8), (8, 10)] and claims[3] is None
    with database.session() as session:
        assert run_rows.get_run(session, run_id).status == "running"
        assert queue.remaining(session, run_id) == 3
        queue.finish(session, claims[0].id)
        assert queue.remaining(session, run_id) == 2


def test_users_are_served_in_turn(database):
    alice = make_run(database, "alice", 40, 4)  # ten slices, queued first
    bob = make_run(database, "bob", 4, 4)  # one
    first, second, third = (claim(database, "s") for _ in range(3))
    assert first.run_id == alice and second.run_id == bob and third.run_id == alice


def test_an_expired_lease_is_taken_over_and_its_old_holder_learns_it(database):
    make_run(database, "alice", 4, 4)
    held = claim(database, "dead", lease_s=30)
    assert claim(database, "alive") is None  # leased: nobody else takes it
    with database.session() as session:  # the holder died: no heartbeat pushed its lease back
        session.execute(update(RunSlice).where(RunSlice.id == held.id).values(lease_until=queue.utcnow()))
    time.sleep(0.01)
    taken = claim(database, "alive")
    assert taken is not None and taken.id == held.id
    with database.session() as session:
        assert queue.renew(session, "dead", [held.id], 30) == set()  # its heartbeat finds it lost
        assert queue.renew(session, "alive", [held.id], 30) == {held.id}


def test_a_slice_given_back_is_claimed_again_at_once(database):
    make_run(database, "alice", 4, 4)
    held = claim(database, "stopping")
    with database.session() as session:
        queue.give_back(session, "stopping")
    again = claim(database, "other")
    assert again is not None and again.id == held.id


def test_slices_of_a_cancelled_run_are_not_claimed(database):
    run_id = make_run(database, "alice", 8, 4)
    with database.session() as session:
        run_rows.set_status(session, run_id, "cancelled")
    assert claim(database, "s") is None


def test_a_run_whose_last_server_died_before_finishing_it_is_finished_by_the_next(db_url, shared_resources):
    """The last slice is marked done and the run finished in two commits; a server killed
    between them leaves an active run with nothing to claim, which the next server finishes."""
    database = Database(db_url)
    upgrade(database)
    run_id = make_run(database, "carol", 4, 4)
    held = claim(database, "dying")
    with database.session() as session:
        queue.finish(session, held.id)  # ... and the server died here
        assert [run.id for run in queue.unfinished_runs(session)] == [run_id]
    database.dispose()
    for api in make_api(db_url, shared_resources):  # its start finishes the run
        run = api.call("GET", f"/runs/{run_id}", "root").json()["data"]
        assert run["status"] == "completed" and run["summary"]["samples"] == 0, run


def due_jobs(database: Database, user: str, jobs: int) -> str:
    """``jobs`` due online jobs of a rule of ``user`` (created if need be); returns the user's id."""
    with database.session() as session:
        owner = get_user(session, user) or create_user(session, user)
        rule = OnlineRule(user_id=owner.id, name="r", evaluators=[])
        session.add(rule)
        session.flush()
        now = queue.utcnow()
        session.add_all(OnlineJob(rule_id=rule.id, user_id=owner.id, scope="span", target=f"t:{n}", state="pending",
                                  ready=True, due_at=now, created_at=now) for n in range(jobs))
        return owner.id


def test_online_jobs_and_runs_are_served_in_turn_within_and_across_users(database):
    alice = make_run(database, "alice", 40, 4)  # ten slices, queued first
    due_jobs(database, "alice", 100)
    bob = due_jobs(database, "bob", 10)
    claims = []
    for _ in range(5):
        claims.append(claim(database, "s"))
        with database.session() as session:
            queue.finish(session, claims[-1].id)
    kinds = [("run" if isinstance(c, queue.Claim) else "online", "bob" if c.user_id == bob else "alice")
             for c in claims]
    # alice (waiting longest) and bob in turn, then alice alone; alice's run and online jobs in
    # turn, the kind served longer ago first
    assert kinds == [("run", "alice"), ("online", "bob"), ("online", "alice"), ("run", "alice"),
                     ("online", "alice")], kinds
    assert [c.jobs for c in claims if isinstance(c, queue.OnlineClaim)] == [10, queue.ONLINE_SLICE, 36]
    assert all(c.run_id == alice for c in claims if isinstance(c, queue.Claim))


def test_an_online_slice_given_back_or_expired_is_taken_again_whole(database):
    due_jobs(database, "alice", 3)
    held = claim(database, "stopping")
    assert isinstance(held, queue.OnlineClaim) and held.jobs == 3 and claim(database, "other") is None
    with database.session() as session:
        queue.give_back(session, "stopping")
    again = claim(database, "other")
    assert isinstance(again, queue.OnlineClaim) and (again.id, again.jobs) == (held.id, 3)
    with database.session() as session:  # its holder died: no heartbeat pushed its lease back
        session.execute(update(RunSlice).where(RunSlice.id == held.id).values(lease_until=queue.utcnow()))
    time.sleep(0.01)
    taken = claim(database, "alive")
    assert isinstance(taken, queue.OnlineClaim) and taken.id == held.id
    with database.session() as session:
        assert queue.renew(session, "other", [held.id], 30) == set()
        assert [job.target for job in online_queue.jobs_of(session, held.id)] == ["t:0", "t:1", "t:2"]
        online_queue.finish(session, held.id, [job.id for job in online_queue.jobs_of(session, held.id)])
        assert online_queue.jobs_of(session, held.id) == [] and rows.backlog(session) == 0
        user_id = session.get(RunSlice, held.id).user_id
        assert online_queue.purge_done(session, queue.utcnow() - timedelta(minutes=1)) == 0  # kept a while:
        assert set(online_queue.served(session, [user_id])) == {user_id}  # it says when the user was served
        assert online_queue.purge_done(session, queue.utcnow() + timedelta(seconds=1)) == 1
        assert online_queue.served(session, [user_id]) == {} and session.get(RunSlice, held.id) is None
    assert claim(database, "alive") is None
