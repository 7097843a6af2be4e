"""Measuring the I/O the service does, without the graders or adapters knowing: a ``CodeRunner``
and a ``JudgeClient`` that count what passes through them, the database pool's use and waits,
and the queue as the database holds it (read at each scrape). Everything is written to the
process's ``Metrics`` (``service.metrics`` lists the series)."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Any

from sqlalchemy import event, func, select
from sqlalchemy.exc import TimeoutError as PoolTimeout
from sqlalchemy.orm import Session

from assay.core.interfaces import CodeBatch, CodeCall, CodeOutcome, CodeRunner, Resources, call_batch
from assay.core.judge import JudgeClient, JudgeReply, JudgeRequest
from assay.service.metrics import Metrics
from assay.store.db import Database
from assay.store.models import ACTIVE_STATES, Run, RunSlice, SliceKind, SliceState, utcnow


class MeteredCodeRunner:
    """A ``CodeRunner`` that counts each evaluation by language and outcome and times it (the
    sandbox's own ``duration_ms``)."""

    def __init__(self, inner: CodeRunner, metrics: Metrics) -> None:
        self.inner = inner
        self.metrics = metrics

    def call(self, request: CodeCall) -> CodeOutcome:
        outcome = self.inner.call(request)
        self._count(str(request.language), [outcome])
        return outcome

    def call_batch(self, batch: CodeBatch) -> list[CodeOutcome]:
        outcomes = call_batch(self.inner, batch)
        self._count(str(batch.language), outcomes)
        return outcomes

    def check(self, language: Any, source: str, function: str = "evaluate") -> str | None:
        return self.inner.check(language, source, function)

    def close(self) -> None:
        close = getattr(self.inner, "close", None)
        if close is not None:
            close()

    def _count(self, language: str, outcomes: Sequence[CodeOutcome]) -> None:
        seconds = self.metrics.sandbox_seconds.labels(language=language)
        for outcome in outcomes:
            self.metrics.sandbox_evaluations.labels(language=language, outcome=str(outcome.error or "ok")).inc()
            seconds.observe(outcome.duration_ms / 1000)


class MeteredJudgeClient:
    """A ``JudgeClient`` that counts each call by outcome, times the calls made (not the cached
    ones) and adds up their tokens."""

    def __init__(self, inner: JudgeClient, metrics: Metrics) -> None:
        self.inner = inner
        self.metrics = metrics

    def judge(self, request: JudgeRequest) -> JudgeReply:
        reply = self.inner.judge(request)
        self._count([reply])
        return reply

    def judge_many(self, requests: Sequence[JudgeRequest]) -> list[JudgeReply]:
        replies = self.inner.judge_many(requests)
        self._count(replies)
        return replies

    def close(self) -> None:
        close = getattr(self.inner, "close", None)
        if close is not None:
            close()

    def __getattr__(self, name: str) -> Any:  # whatever else the real client offers (its cache, prices)
        return getattr(self.inner, name)

    def _count(self, replies: Sequence[JudgeReply]) -> None:
        m = self.metrics
        for reply in replies:
            m.judge_calls.labels(outcome="cached" if reply.cached and reply.ok else str(reply.error or "ok")).inc()
            if not reply.cached:
                m.judge_seconds.observe(reply.latency_ms / 1000)
            for kind in ("prompt", "completion"):
                tokens = reply.usage.get(f"{kind}_tokens", 0)
                if tokens:
                    m.judge_tokens.labels(kind=kind).inc(tokens)


def metered_resources(resources: Resources, metrics: Metrics) -> Resources:
    """``resources`` (a copy) with its code runner and judge client counted in ``metrics``."""
    return replace(resources,
                   code_runner=None if resources.code_runner is None
                   else MeteredCodeRunner(resources.code_runner, metrics),
                   judge_client=None if resources.judge_client is None
                   else MeteredJudgeClient(resources.judge_client, metrics))


def meter_pool(database: Database, metrics: Metrics) -> Callable[[], None]:
    """Time every request for a connection of ``database``'s pool (again after the pool is
    replaced by ``dispose``); returns what sets the pool gauges, to call at each scrape."""
    engine = database.engine

    def wrap(pool: Any) -> None:
        connect = pool.connect

        def timed_connect() -> Any:
            began = time.perf_counter()
            try:
                return connect()
            except PoolTimeout:
                metrics.pool_timeouts.inc()
                raise
            finally:
                metrics.pool_wait_seconds.observe(time.perf_counter() - began)

        pool.connect = timed_connect  # the engine asks its pool through this attribute

    wrap(engine.pool)
    event.listen(engine, "engine_disposed", lambda _engine: wrap(engine.pool))

    def read() -> None:
        pool = engine.pool
        states = {"checked_out": "checkedout", "idle": "checkedin", "overflow": "overflow", "size": "size"}
        for state, method in states.items():
            value = getattr(pool, method, None)
            if value is not None:
                metrics.pool_connections.labels(state=state).set(max(0, value()))

    return read


def queue_state(session: Session, now: datetime | None = None) -> tuple[dict[str, int], int]:
    """Slices of unfinished runs by state (``expired``: leased past its lease; online slices are
    not counted: the online backlog is ``store.online.backlog``) and the results
    that queued and running runs still lack, as the database holds them."""
    now = now or utcnow()
    slices = {str(state): int(count) for state, count in session.execute(
        select(RunSlice.state, func.count())
        .where(RunSlice.kind == SliceKind.RUN.value, RunSlice.state != SliceState.DONE).group_by(RunSlice.state))}
    expired = int(session.scalar(select(func.count()).where(RunSlice.kind == SliceKind.RUN.value,
                                                            RunSlice.state == SliceState.LEASED,
                                                            RunSlice.lease_until < now)) or 0)
    if expired:  # leased past its lease: its server is gone, the next claim takes it over
        slices["leased"] = slices.get("leased", 0) - expired
        slices["expired"] = expired
    backlog = session.scalar(select(func.coalesce(func.sum(Run.total - Run.done), 0))
                             .where(Run.status.in_([str(s) for s in ACTIVE_STATES])))
    return slices, max(0, int(backlog or 0))
