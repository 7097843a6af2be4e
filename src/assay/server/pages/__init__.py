"""The web pages of ``assay serve``: the evaluator list and editor, tasks, runs and samples.

Pages are frames drawn by scripts (``static/``, built from ``web/``) that call the JSON API
with the session cookie (``session.CookieAuth``); no grading logic lives here. ``install``
mounts everything on an app.
"""

from __future__ import annotations

from collections.abc import Awaitable

from fastapi import FastAPI, Request
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException
from starlette.responses import Response

from assay.server.pages import api, facts, live, views
from assay.server.pages.session import CookieAuth
from assay.server.pages.views import STATIC_DIR


def install(app: FastAPI, api_prefix: str) -> None:
    """Add the pages, their API, the static files and the cookie sessions to ``app``."""
    app.include_router(views.router)
    app.include_router(api.router)
    app.include_router(facts.router)
    app.include_router(live.router)
    app.mount("/static", StaticFiles(directory=str(STATIC_DIR), check_dir=False), name="static")
    app.add_middleware(CookieAuth, prefixes=(api_prefix + "/", "/pages/api/"))
    json_error = app.exception_handlers[HTTPException]

    async def not_found(request: Request, exc: Exception) -> Response:
        # A browser that asks for a page that is not there gets the 404 page; the API's
        # clients keep the JSON error.
        if isinstance(exc, HTTPException) and exc.status_code == 404 and views.wants_page(request):
            return await views.not_found_page(request)
        answer = json_error(request, exc)  # FastAPI's is async; a handler may be either
        return await answer if isinstance(answer, Awaitable) else answer

    app.add_exception_handler(HTTPException, not_found)


__all__ = ["install"]
