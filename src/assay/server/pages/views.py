"""The pages' routes: sign-in and sign-out, and one route per page, each answering the frame
whose script draws the page from the JSON API. A request without a live session is sent to
the sign-in page, which brings the user back where they were going."""

from __future__ import annotations

from dataclasses import dataclass
from html import escape
from importlib import resources
from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Form, Request
from fastapi.responses import FileResponse, HTMLResponse, RedirectResponse, Response
from starlette.concurrency import run_in_threadpool

from assay.server.auth import Principal
from assay.server.pages import shell
from assay.server.pages.i18n import LANG_COOKIE, message, pick_language
from assay.server.pages.session import (
    SESSION_COOKIE,
    SIGNIN_COOKIE,
    cookie_options,
    csrf_matches,
    csrf_token,
    new_signin_nonce,
    same_origin,
)
from assay.server.service import Service

router = APIRouter(include_in_schema=False)
STATIC_DIR = resources.files("assay.server").joinpath("static")
PAGE_HEADERS = {"Cache-Control": "no-store", "X-Frame-Options": "DENY", "Referrer-Policy": "same-origin"}


@dataclass(frozen=True)
class Visitor:
    """Who is looking at a page, in which language."""

    lang: str
    principal: Principal | None
    token: str | None

    @property
    def csrf(self) -> str | None:
        return csrf_token(self.token) if self.token else None


async def principal_for(service: Service, token: str | None) -> Principal | None:
    if not token:
        return None
    known, principal = service.tokens.cached(token)
    if not known:
        principal = await run_in_threadpool(service.tokens.lookup, token)
    return principal


async def visitor(request: Request) -> Visitor:
    lang = pick_language(request.cookies.get(LANG_COOKIE), request.headers.get("accept-language"))
    token = request.cookies.get(SESSION_COOKIE)
    principal = await principal_for(request.app.state.service, token)
    return Visitor(lang, principal, token if principal else None)


def _safe_next(target: str | None) -> str:
    """Only a path on this server (never ``//host`` or a full URL) is a place to come back to.
    Whitespace and control characters are refused too: browsers drop tabs and line breaks from
    a URL, which would make ``/<tab>/host`` the address of another site."""
    if (target and len(target) <= 2000 and target.startswith("/") and not target.startswith("//")
            and "\\" not in target and all(ch.isprintable() and not ch.isspace() for ch in target)):
        return target
    return "/evaluators"


async def page(request: Request, page_name: str, title_key: str, active: str, **params: str) -> Response:
    who = await visitor(request)
    if who.principal is None:
        response = RedirectResponse("/signin?next=" + quote(request.url.path, safe="/"), status_code=303)
        if request.cookies.get(SESSION_COOKIE):  # its token was revoked: the session ends with it
            response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="lax")
        return response
    title = message(who.lang, title_key, **params)
    me = {"id": who.principal.id, "name": who.principal.name, "isAdmin": who.principal.is_admin}
    html = shell.render(lang=who.lang, title=title, page=page_name, user=who.principal.name, csrf=who.csrf,
                        params=params, active=active, me=me)
    return HTMLResponse(html, headers=PAGE_HEADERS)


NOT_PAGES = ("/api/", "/pages/api/", "/static/", "/health", "/docs", "/openapi.json", "/redoc")


def wants_page(request: Request) -> bool:
    """A browser asking for a page (not the API, not a file): it gets the HTML 404 page."""
    return (not request.url.path.startswith(NOT_PAGES)
            and "text/html" in request.headers.get("accept", ""))


async def not_found_page(request: Request) -> Response:
    """The 404 page: what happened and the ways back, in the visitor's language."""
    who = await visitor(request)
    t = lambda key: escape(message(who.lang, key))  # noqa: E731
    body = (f'<section class="state empty not-found" role="alert"><h1>{t("notfound.title")}</h1>'
            f'<p>{t("notfound.hint")}</p><p class="actions">'
            f'<a class="button primary" href="/evaluators">{t("notfound.backevaluators")}</a> '
            f'<a class="button secondary" href="/tasks">{t("notfound.backtasks")}</a></p></section>')
    user = who.principal.name if who.principal else None
    html = shell.render(lang=who.lang, title=message(who.lang, "notfound.title"), page="notfound", user=user,
                        csrf=who.csrf, body=body)
    return HTMLResponse(html, status_code=404, headers=PAGE_HEADERS)


@router.get("/favicon.ico")
async def favicon() -> Response:
    """Browsers ask for it before reading the page's ``<link rel=icon>``: the same picture."""
    return FileResponse(str(STATIC_DIR.joinpath("favicon.svg")), media_type="image/svg+xml",
                        headers={"Cache-Control": "public, max-age=86400"})


@router.get("/")
async def home() -> Response:
    return RedirectResponse("/evaluators", status_code=303)


@router.get("/evaluators")
async def evaluators_page(request: Request) -> Response:
    return await page(request, "evaluators", "evaluators.title", "evaluators")


@router.get("/evaluators/new")
async def new_evaluator_page(request: Request) -> Response:
    return await page(request, "editor", "editor.newTitle", "evaluators", id="")


@router.get("/evaluators/{evaluator_id}")
async def evaluator_page(request: Request, evaluator_id: str) -> Response:
    return await page(request, "editor", "evaluators.title", "evaluators", id=evaluator_id)


@router.get("/online")
async def online_page(request: Request) -> Response:
    return await page(request, "online", "online.title", "online")


@router.get("/online/new")
async def new_online_rule_page(request: Request) -> Response:
    return await page(request, "online-form", "online.newTitle", "online", id="")


@router.get("/online/{rule_id}")
async def online_rule_page(request: Request, rule_id: str) -> Response:
    return await page(request, "online-rule", "online.title", "online", id=rule_id)


@router.get("/online/{rule_id}/edit")
async def edit_online_rule_page(request: Request, rule_id: str) -> Response:
    return await page(request, "online-form", "online.editTitle", "online", id=rule_id)


@router.get("/traces")
async def traces_page(request: Request) -> Response:
    return await page(request, "traces", "traces.title", "online")


@router.get("/traces/{trace_id}")
async def trace_page(request: Request, trace_id: str) -> Response:
    return await page(request, "trace", "traces.title", "online", id=trace_id)


@router.get("/tasks")
async def tasks_page(request: Request) -> Response:
    return await page(request, "tasks", "tasks.title", "tasks")


@router.get("/tasks/new")
async def new_task_page(request: Request) -> Response:
    return await page(request, "task-form", "taskForm.newTitle", "tasks", id="")


@router.get("/tasks/{task_id}")
async def task_page(request: Request, task_id: str) -> Response:
    return await page(request, "task", "tasks.title", "tasks", id=task_id)


@router.get("/tasks/{task_id}/edit")
async def edit_task_page(request: Request, task_id: str) -> Response:
    return await page(request, "task-form", "taskForm.editTitle", "tasks", id=task_id)


@router.get("/datasets")
async def datasets_page(request: Request) -> Response:
    return await page(request, "datasets", "datasets.title", "datasets")


@router.get("/datasets/{dataset_id}")
async def dataset_page(request: Request, dataset_id: str) -> Response:
    return await page(request, "dataset", "datasets.title", "datasets", id=dataset_id)


@router.get("/users")
async def users_page(request: Request) -> Response:
    return await page(request, "users", "users.title", "users")


@router.get("/account")
async def account_page(request: Request) -> Response:
    return await page(request, "account", "account.title", "")


@router.get("/runs/{run_id}")
async def run_page(request: Request, run_id: str) -> Response:
    return await page(request, "run", "run.title", "tasks", id=run_id)


@router.get("/runs/{base_id}/compare/{new_id}")
async def compare_page(request: Request, base_id: str, new_id: str) -> Response:
    return await page(request, "compare", "compare.title", "tasks", base=base_id, new=new_id)


@router.get("/runs/{run_id}/samples/{sample_id}")
async def sample_page(request: Request, run_id: str, sample_id: str) -> Response:
    return await page(request, "sample", "sample.title", "tasks", id=sample_id, run=run_id)


def _signin_html(lang: str, nonce: str, next_path: str, problem: str | None) -> str:
    t = lambda key: escape(message(lang, key))  # noqa: E731
    error = f'<p class="alert error" role="alert">{t(problem)}</p>' if problem else ""
    return (f'<section class="card signin"><h1>{t("signin.title")}</h1>{error}'
            f'<form method="post" action="/signin"><input type="hidden" name="nonce" value="{escape(nonce)}">'
            f'<input type="hidden" name="next" value="{escape(next_path)}">'
            f'<label for="token">{t("signin.token")}</label>'
            f'<input id="token" name="token" type="password" autocomplete="off" required autofocus>'
            f'<p class="hint">{t("signin.help")}</p>'
            f'<button type="submit" class="primary">{t("signin.submit")}</button></form></section>')


def _signin_page(request: Request, lang: str, next_path: str, problem: str | None = None,
                 status: int = 200) -> Response:
    nonce = new_signin_nonce()
    body = _signin_html(lang, nonce, next_path, problem)
    html = shell.render(lang=lang, title=message(lang, "signin.title"), page="signin", body=body)
    response = HTMLResponse(html, status_code=status, headers=PAGE_HEADERS)
    response.set_cookie(SIGNIN_COOKIE, nonce, **cookie_options(request.url.scheme == "https", max_age=3600))
    return response


@router.get("/signin")
async def signin_form(request: Request, next: str | None = None) -> Response:
    who = await visitor(request)
    if who.principal is not None:
        return RedirectResponse(_safe_next(next), status_code=303)
    return _signin_page(request, who.lang, _safe_next(next))


@router.post("/signin")
async def signin(request: Request, token: Annotated[str, Form(max_length=500)],
                 nonce: Annotated[str, Form(max_length=100)] = "",
                 next: Annotated[str, Form()] = "/evaluators") -> Response:
    who = await visitor(request)
    cookie_nonce = request.cookies.get(SIGNIN_COOKIE) or ""
    if not nonce or nonce != cookie_nonce or not same_origin(dict(request.headers), request.url.scheme):
        return _signin_page(request, who.lang, _safe_next(next), "signin.expired", status=403)
    token = token.strip()
    if await principal_for(request.app.state.service, token) is None:
        return _signin_page(request, who.lang, _safe_next(next), "signin.invalid", status=401)
    response = RedirectResponse(_safe_next(next), status_code=303)
    response.set_cookie(SESSION_COOKIE, token, **cookie_options(request.url.scheme == "https"))
    response.delete_cookie(SIGNIN_COOKIE, path="/")
    return response


@router.post("/signout")
async def signout(request: Request, csrf: Annotated[str, Form(max_length=200)] = "") -> Response:
    token = request.cookies.get(SESSION_COOKIE)
    if token and (not csrf_matches(token, csrf) or not same_origin(dict(request.headers), request.url.scheme)):
        return Response(message(pick_language(request.cookies.get(LANG_COOKIE), None), "signin.expired"),
                        status_code=403, media_type="text/plain; charset=utf-8")
    response = RedirectResponse("/signin", status_code=303)
    response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="lax")
    return response
