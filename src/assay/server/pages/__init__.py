"""The web pages of ``assay serve``: the evaluator list and editor, tasks, runs and samples.

Pages are frames drawn by scripts (``static/``, built from ``web/``) that call the JSON API
with the session cookie (``session.CookieAuth``); no grading logic lives here. ``install``
mounts everything on an app.
"""

from __future__ import annotations

from importlib import resources

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from assay.server.pages import api, views
from assay.server.pages.session import CookieAuth

STATIC_DIR = resources.files("assay.server").joinpath("static")


def install(app: FastAPI, api_prefix: str) -> None:
    """Add the pages, their API, the static files and the cookie sessions to ``app``."""
    app.include_router(views.router)
    app.include_router(api.router)
    app.mount("/static", StaticFiles(directory=str(STATIC_DIR), check_dir=False), name="static")
    app.add_middleware(CookieAuth, prefixes=(api_prefix + "/", "/pages/api/"))


__all__ = ["install"]
