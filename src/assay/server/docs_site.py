"""The manual at ``/docs/site``: the docs site (mkdocs.yml) as ``make docs`` or ``make setup``
built it into ``server/manual/`` beside this module, so a team's own server carries the manual of
its own version. The API's OpenAPI pages stay at ``/docs``.

Like ``/health``, it needs no token: it holds nothing of a workspace. Files are served by
Starlette's ``StaticFiles`` from that one folder: a path that resolves outside it (``..``, an
encoded ``%2e%2e``, a symbolic link out) is answered 404. When the site is not built, every path
under ``/docs/site`` answers a short page that says how to build it.
"""

from __future__ import annotations

import html
from pathlib import Path

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles
from starlette.responses import HTMLResponse, Response
from starlette.types import Receive, Scope, Send

MANUAL_DIR = Path(__file__).resolve().parent / "manual"
"""Where the built site lies (``site_dir`` in mkdocs.yml); not committed."""
MANUAL_PATH = "/docs/site"
MANUAL_CSP = ("default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
              "img-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; object-src 'none'; "
              "base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
"""The manual's own files only; its theme starts with a few inline scripts (the palette, the
search's settings), which the pages' policy would block."""

NOT_BUILT = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>assay: the manual is not built</title></head>
<body><main>
<h1>The manual is not built on this server</h1>
<p>This server serves the docs site from <code>{folder}</code>, which is empty. In a checkout of
assay, <code>make docs</code> (or <code>make setup</code>) builds it there; no restart is needed.
The same manual, as Markdown, is in the <code>docs/</code> folder of the checkout.</p>
<p>The API's own reference is at <a href="/docs">/docs</a>.</p>
<h1 lang="zh">此服务器上尚未构建手册</h1>
<p lang="zh">本服务器从 <code>{folder}</code> 提供文档站点，但该目录为空。在 assay 的源码目录中运行
<code>make docs</code>（或 <code>make setup</code>）即可在此构建，无需重启。</p>
</main></body></html>
"""


class ManualFiles(StaticFiles):
    """``StaticFiles`` over the built site (index pages for folders), or the page saying how to
    build it while the folder holds no site."""

    def __init__(self, directory: Path) -> None:
        super().__init__(directory=str(directory), html=True, check_dir=False)
        self.folder = directory

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if not (self.folder / "index.html").is_file():
            page = NOT_BUILT.format(folder=html.escape(str(self.folder)))
            response: Response = HTMLResponse(page, status_code=404)
            await response(scope, receive, send)
            return
        await super().__call__(scope, receive, send)


def install(app: FastAPI, directory: Path = MANUAL_DIR) -> None:
    """Serve the manual from ``directory`` at ``/docs/site``."""
    app.mount(MANUAL_PATH, ManualFiles(directory), name="manual")
