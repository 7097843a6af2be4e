"""Revision 0017 on both databases: online jobs waiting in a database of the previous release
(pending, or leased by one of its servers) carry over into the shared run queue, the next claim
takes them into one online slice; done jobs stay done, and a run's slices stay run slices."""

from __future__ import annotations

from datetime import timedelta

from sqlalchemy import text

from assay.store import Database, queue, upgrade
from assay.store import tasks as task_rows
from assay.store.models import Run, utcnow
from assay.store.online_models import OnlineJob, OnlineRule
from assay.store.users import create_user

JOB = ("INSERT INTO online_jobs (rule_id, user_id, scope, target, generation, state, ready, due_at, holder, "
       "lease_until, attempts, created_at) VALUES (:rule, :user, 'span', :target, 1, :state, :ready, :due, :holder, "
       ":lease, :attempts, :due)")


def test_online_jobs_of_the_previous_release_carry_over_into_the_run_queue(db_url):
    database = Database(db_url)
    try:
        upgrade(database, "0015")
        now = utcnow()
        with database.session() as session:
            owner = create_user(session, "carol")
            rule = OnlineRule(user_id=owner.id, name="r", filter="", sample_rate=1.0, scope="span", quiet_s=30,
                              evaluators=[], enabled=True)
            session.add(rule)
            session.flush()
            for target, state, holder, attempts in (("t:1", "pending", None, 0),
                                                    ("t:2", "leased", "old-server", 1),
                                                    ("t:3", "done", None, 1)):
                session.execute(text(JOB), {"rule": rule.id, "user": owner.id, "target": target, "state": state,
                                            "ready": True, "due": now - timedelta(seconds=5), "holder": holder,
                                            "lease": now + timedelta(minutes=2) if holder else None,
                                            "attempts": attempts})
            task = task_rows.create_task(session, name="t", description=None, dataset_id=None, evaluators=[],
                                         created_by_id=owner.id)
            run = Run(task_id=task.id, status="queued", evaluators=[], total=4, done=0, created_by_id=owner.id)
            session.add(run)
            session.flush()
            session.execute(text("INSERT INTO run_slices (run_id, user_id, start, stop, state, attempts) "
                                 "VALUES (:run, :user, 0, 4, 'pending', 0)"), {"run": run.id, "user": owner.id})
            rule_id, user_id = rule.id, owner.id
        upgrade(database)
        with database.session() as session:
            jobs = {job.target: job for job in session.query(OnlineJob)}
            assert {t: (j.state, j.holder, j.slice_id) for t, j in jobs.items()} == {
                "t:1": ("pending", None, None), "t:2": ("pending", None, None), "t:3": ("done", None, None)}
            assert session.scalar(text("SELECT count(*) FROM run_slices WHERE kind = 'run'")) == 1
        claims = []
        for holder in ("new-server", "other"):
            with database.session() as session:
                claims.append(queue.claim(session, holder, 30))
        online = next(c for c in claims if isinstance(c, queue.OnlineClaim))
        assert (online.user_id, online.jobs) == (user_id, 2)
        assert any(isinstance(c, queue.Claim) for c in claims)  # the run's slice, too, in turn
        with database.session() as session:
            taken = {job.target: (job.state, job.slice_id) for job in session.query(OnlineJob)
                     .filter(OnlineJob.rule_id == rule_id)}
        assert taken == {"t:1": ("leased", online.id), "t:2": ("leased", online.id), "t:3": ("done", None)}
    finally:
        database.dispose()
