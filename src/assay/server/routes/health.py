"""Operating the service, without a token: ``/health`` (the process answers: liveness),
``/ready`` (it can serve and grade: the database answers at the schema this code expects, the run
queue can be read, and every grading thread runs and sees the database) and ``/metrics``
(Prometheus' text format, ``service.metrics``). ``/ready`` reads through the grading pool on a
thread of its own, so a crowd of requests waiting for connections does not delay its answer.

Keep ``/metrics`` on the operators' network: it shows user ids (no names) and the load."""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

import assay
from assay.core.messages import Phrase
from assay.server.deps import ServiceDep
from assay.server.errors import ApiError, log
from assay.server.schemas.common import Envelope
from assay.server.service import Service
from assay.service.metrics import CONTENT_TYPE, RUN_STATES
from assay.service.telemetry import queue_state
from assay.store import runs as run_rows
from assay.store.migrate import current_revision, head_revision

router = APIRouter(tags=["health"])
NO_DATABASE = Phrase("api.ready.no_database", "database unavailable ({error}); the server log has the details")
CANNOT_GRADE = Phrase("api.ready.cannot_grade", "this server cannot grade now: {problem}")
OTHER_SCHEMA = Phrase("api.ready.other_schema", "the database schema is at {revision}, this server expects {expected}: "
                                                "run `assay db upgrade` (or start a server of the matching version)")


@router.get("/health", response_model=Envelope[dict[str, Any]], summary="Is the process up? (liveness)")
async def health() -> Any:
    return Envelope(data={"status": "ok", "version": assay.__version__})


@router.get("/ready", response_model=Envelope[dict[str, Any]],
            summary="Can it serve? The database answers at this code's schema and the run queue is readable")
async def ready(service: ServiceDep) -> Any:
    problem = service.problem()
    if problem is not None:
        raise ApiError(503, CANNOT_GRADE(problem=problem), headers=RETRY_AFTER)
    try:
        # its own thread, not the requests' threadpool, which a crowd may fill
        revision, counts = await asyncio.to_thread(_queue_state, service)
    except Exception as exc:  # noqa: BLE001  a readiness check reports, it does not raise
        log.warning("readiness: the database did not answer: %s", exc)
        raise ApiError(503, NO_DATABASE(error=type(exc).__name__), headers=RETRY_AFTER) from None
    expected = head_revision()
    if revision != expected:
        raise ApiError(503, OTHER_SCHEMA(revision=repr(revision), expected=repr(expected)))
    return Envelope(data={"status": "ready", "database": service.database.engine.dialect.name, "schema": revision,
                          "runs": {state: counts.get(state, 0) for state in RUN_STATES}})


@router.get("/metrics", summary="Prometheus metrics (text exposition format)", response_class=Response)
async def metrics(service: ServiceDep) -> Response:
    try:
        _, counts = await run_in_threadpool(_queue_state, service)
        service.metrics.set_runs(counts)
    except Exception as exc:  # noqa: BLE001  the other metrics are still worth a scrape
        log.warning("metrics: run counts not read: %s", exc)
    try:
        slices, backlog = await run_in_threadpool(_slices_state, service)
        service.metrics.set_queue(slices, backlog)
    except Exception as exc:  # noqa: BLE001  the other metrics are still worth a scrape
        log.warning("metrics: the run queue's slices not read: %s", exc)
    service.pool_gauges()
    service.metrics.set_sandbox(service.gate.in_flight(), service.gate.waiting())
    service.metrics.set_database(service.health.reason() is not None, service.health.outages)
    try:
        on_ray = await run_in_threadpool(service.worker.slices.ray_in_flight)
        if on_ray is not None:
            service.metrics.set_ray(on_ray)
    except Exception as exc:  # noqa: BLE001  the other metrics are still worth a scrape
        log.warning("metrics: the Ray cluster's code permits not read: %s", exc)
    return Response(service.metrics.render(), media_type=CONTENT_TYPE)


RETRY_AFTER = {"Retry-After": "5"}


def _slices_state(service: Service) -> tuple[dict[str, int], int]:
    with service.database.session() as session:
        return queue_state(session)


def _queue_state(service: Service) -> tuple[str | None, dict[str, int]]:
    revision = current_revision(service.background)
    with service.background.session() as session:
        return revision, run_rows.count_by_status(session, RUN_STATES)
