"""The FastAPI application: ``create_app(settings)`` is the composition root of the service.

At start it brings the database schema up to date (Alembic) and joins the run queue shared by
every server of the database; at shutdown it gives its slices back and stops the sandbox. Routes live under
``/api/v1``; ``/health`` needs no token; the OpenAPI document is at ``/openapi.json`` and
its pages at ``/docs``; the manual (the docs site, when built) at ``/docs/site``, without a
token like ``/health``; the web pages (``assay.server.pages``) at ``/evaluators``, ``/tasks``
and ``/runs``. The hot request, ``POST /api/v1/evaluators/{id}/test``, is answered in front of
the framework when nothing but memory is needed for it (``server.fast_test``).
"""

from __future__ import annotations

import gc
import logging
import re
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from fastapi import FastAPI
from fastapi.routing import iter_route_contexts
from starlette.concurrency import run_in_threadpool
from starlette.routing import Mount, compile_path
from starlette.types import Scope

import assay
from assay.core.interfaces import Resources
from assay.server import docs_site, errors
from assay.server.admission import DatabaseAdmission
from assay.server.edge import Edge
from assay.server.fast_test import FastTest
from assay.server.limits import BodyLimit
from assay.server.logs import JsonFormatter, log_stray_output
from assay.server.otlp_status import OtlpStatus
from assay.server.pages import install as install_pages
from assay.server.routes import (
    compare,
    datasets,
    evaluator_versions,
    evaluators,
    health,
    online_rules,
    otlp,
    run_export,
    runs,
    tasks,
    tokens,
    traces,
    users,
)
from assay.server.service import Service
from assay.settings import Settings
from assay.store.migrate import upgrade

API_PREFIX = "/api/v1"
OTLP_PATH = "/v1/traces"
"""OTLP/HTTP's trace export path (``server.routes.otlp``): protobuf or JSON, gzip allowed."""
log = logging.getLogger("assay.server")


def _settle_heap() -> None:
    """Move what start-up made (modules, models, routes: ~160,000 objects) out of the collector's
    reach. A full collection walked all of it, 100-140 ms with every thread stopped, a few times
    a minute under load: the slowest answers of ``POST /v1/traces`` were those pauses. Objects
    made from here on are collected as usual."""
    gc.collect()
    gc.freeze()


def create_app(settings: Settings, *, resources: Resources | None = None, fast_test: bool = True,
               settle_heap: bool = False) -> FastAPI:
    """The service for ``settings``; ``resources`` replaces the real sandbox and judge client
    (tests pass fakes); ``fast_test=False`` leaves out the fast path of ``/test`` (``server.fast_test``),
    for the tests that compare it with the route. ``settle_heap``: the process is the server's
    own (``assay serve``), so what start-up made may be frozen out of the collector's reach
    (never in a process that makes many apps, such as a test's: what they drop would stay)."""
    service = Service.build(settings, resources)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[dict[str, Any]]:
        await run_in_threadpool(upgrade, service.database)
        waiting = await run_in_threadpool(service.start)
        if waiting:
            log.info("%d run(s) waiting in the queue: %s", len(waiting), ", ".join(waiting[:20]))
        if settle_heap:
            _settle_heap()
        try:
            # The server's state: the HTTP protocol counts the requests it refuses itself there.
            yield {"assay_metrics": service.metrics}
        finally:
            await run_in_threadpool(service.close)

    app = FastAPI(title="assay", version=assay.__version__, lifespan=lifespan,
                  description="Evaluators kept in a database, managed and tested over a REST API, attached to "
                              "tasks whose runs store every evaluation result. Every route but /health needs "
                              "`Authorization: Bearer <token>` (`assay tokens create USER`).")
    app.state.service = service
    errors.install(app)
    app.include_router(health.router)
    app.include_router(otlp.router)
    for module in (evaluators, evaluator_versions, datasets, tasks, runs, run_export, compare, tokens, users,
                   online_rules, traces):
        app.include_router(module.router, prefix=API_PREFIX)
    docs_site.install(app, Path(settings.manual_dir) if settings.manual_dir else docs_site.MANUAL_DIR)
    install_pages(app, API_PREFIX)

    def is_upload(path: str) -> bool:
        """A dataset file upload: ``PUT /tasks/{id}/dataset`` or ``POST /datasets/{id}/versions``."""
        return path.endswith(("/dataset", "/versions"))

    def limit_for(path: str) -> int:
        if path == OTLP_PATH:
            return settings.otlp_max_body_bytes
        return settings.api_max_upload_bytes if is_upload(path) else settings.api_max_body_bytes

    def is_json(path: str) -> bool:
        """The API's and the pages' API's routes take JSON bodies, but for the dataset uploads and
        the start of a file whose header the upload page reads (``/pages/api/datasets/header``,
        which bounds its body itself)."""
        return (path.startswith((API_PREFIX + "/", "/pages/api/")) and not is_upload(path)
                and path != "/pages/api/datasets/header")

    # Added first, the innermost: behind the body checks (a refused body costs no place) and the
    # fast path of /test (which needs no database), as many requests at once as the requests'
    # pool has connections.
    app.add_middleware(DatabaseAdmission, limit=settings.database_pool_size + settings.database_pool_overflow,
                       queue=settings.database_queue, wait_s=settings.database_wait_ms / 1000, exempt=needs_no_database,
                       metrics=service.metrics)
    app.add_middleware(BodyLimit, limit_for=limit_for, is_json=is_json, inflates=lambda path: path == OTLP_PATH)
    if fast_test:  # in front of the two above
        app.add_middleware(FastTest, service=service, prefix=API_PREFIX, max_body_bytes=settings.api_max_body_bytes)
    # added last: the outermost layer (request ids, security headers, body timeout, HTTP metrics)
    app.add_middleware(Edge, body_timeout_s=settings.api_body_timeout_s, metrics=service.metrics,
                       route_of=route_template(app))
    app.add_middleware(OtlpStatus, path=OTLP_PATH)  # around everything: any refusal of an export, as OTLP says it
    return app


def route_template(app: FastAPI) -> Callable[[Scope], str]:
    """The template of the route a request's path names (``/api/v1/runs/{run_id}``), for metric
    labels: a path never becomes a label (``unmatched`` when no route takes it). The table is
    built once, at the first request, from every route the app holds, included routers too."""
    table: list[tuple[re.Pattern[str], str]] = []

    def build() -> None:
        for context in iter_route_contexts(app.routes):
            template = context.path_format
            if not template:
                continue
            if isinstance(context.original_route, Mount):
                table.append((re.compile(re.escape(template) + "/.*"), template + "/{path}"))
            else:
                table.append((compile_path(template)[0], template))

    def route_of(scope: Scope) -> str:
        if not table:
            build()
        path = scope["path"]
        for pattern, template in table:
            if pattern.match(path):
                return template
        return "unmatched"

    return route_of


NO_DATABASE_PATHS = ("/health", "/ready", "/metrics", "/static/", "/docs", "/openapi.json", "/favicon")
"""Paths answered without the requests' pool: liveness, readiness and metrics (through the
grading pool), the static files and the API's own documents."""


def needs_no_database(path: str) -> bool:
    return path.startswith(NO_DATABASE_PATHS)


def app_from_env() -> FastAPI:
    """The service for the environment's settings: the app factory each process of ``assay serve
    --workers N`` calls (uvicorn starts them, so they cannot be handed a ``Settings``). Under
    ``--log-format json`` (uvicorn configured this process's root logger with the JSON
    formatter) its warnings and uncaught exceptions are log records too, as in the parent."""
    if any(isinstance(handler.formatter, JsonFormatter) for handler in logging.getLogger().handlers):
        log_stray_output()
    from assay.server.protocol import BoundedHttpProtocol, HeadLimits

    settings = Settings.from_env()
    BoundedHttpProtocol.limits = HeadLimits.of(settings)  # this process's connections, as in the parent
    return create_app(settings, settle_heap=True)
