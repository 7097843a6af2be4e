"""``/health``: liveness and the database's schema revision; the one route without a token."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter
from starlette.concurrency import run_in_threadpool

from assay.server.deps import ServiceDep
from assay.server.errors import ApiError
from assay.server.schemas.common import Envelope
from assay.store.migrate import current_revision

router = APIRouter(tags=["health"])


@router.get("/health", response_model=Envelope[dict[str, Any]], summary="Is the service up?")
async def health(service: ServiceDep) -> Any:
    try:
        revision = await run_in_threadpool(current_revision, service.database)
    except Exception as exc:  # noqa: BLE001  a health check reports, it does not raise
        raise ApiError(503, f"database unavailable: {type(exc).__name__}") from None
    return Envelope(data={"status": "ok", "database": service.database.engine.dialect.name, "schema": revision})
