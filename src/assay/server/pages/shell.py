"""The HTML frame of every page: head, top bar (navigation, language switch, sign-out), the
element the page's script fills, and the boot data that script reads (language, messages,
CSRF token, the page's parameters). Text comes from the message catalogue only."""

from __future__ import annotations

import functools
import hashlib
from html import escape
from importlib import resources
from typing import Any

import orjson

from assay.server.pages.i18n import HTML_LANG, LANGUAGES, catalogue, message


@functools.cache
def asset_version(name: str) -> str:
    """A short hash of a static file, so a new build is never served from a stale cache."""
    path = resources.files("assay.server").joinpath("static", name)
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()[:10]
    except OSError:
        return "missing"


def asset(name: str) -> str:
    return f"/static/{name}?v={asset_version(name)}"


def _boot_json(data: dict[str, Any]) -> str:
    # "<" escaped so that no value can close the script element.
    return orjson.dumps(data).decode().replace("<", "\\u003c")


def _language_switch(lang: str) -> str:
    options = "".join(f'<option value="{code}"{" selected" if code == lang else ""}>'
                      f'{escape(message(lang, "lang." + code))}</option>' for code in LANGUAGES)
    label = escape(message(lang, "nav.language"))
    return f'<select id="lang-switch" aria-label="{label}" title="{label}">{options}</select>'


def _top_bar(lang: str, user: str | None, csrf: str | None, active: str) -> str:
    t = functools.partial(message, lang)
    links = "".join(f'<a href="/{key}"{" class=active" if key == active else ""}>{escape(t("nav." + key))}</a>'
                    for key in ("evaluators", "tasks", "datasets")) if user else ""
    account = f'<a class="user" href="/account" title="{escape(t("nav.account"))}">{escape(user or "")}</a>'
    signout = (f'{account}<form method="post" action="/signout" class="signout">'
               f'<input type="hidden" name="csrf" value="{escape(csrf or "")}">'
               f'<button type="submit" class="link">{escape(t("nav.signout"))}</button></form>') if user else ""
    return (f'<header class="topbar"><a class="brand" href="/evaluators">{escape(t("app.title"))}</a>'
            f'<nav>{links}</nav><div class="spacer"></div>'
            f'<div class="session">{_language_switch(lang)}{signout}</div></header>')


def render(*, lang: str, title: str, page: str, user: str | None = None, csrf: str | None = None,
           params: dict[str, Any] | None = None, active: str = "", body: str = "",
           me: dict[str, Any] | None = None) -> str:
    """A whole page: ``page`` names the script (``static/<page>.js``) that fills ``<main>``;
    ``body`` is server-rendered content for pages without a script of their own; ``me``, who
    is signed in (``{id, name, isAdmin}``: the scripts disable what the rule of
    ``server.ownership`` would refuse)."""
    boot = {"lang": lang, "messages": catalogue(lang), "csrf": csrf, "page": page, "params": params or {},
            "me": me}
    return (
        f'<!doctype html><html lang="{HTML_LANG[lang]}"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)} · {escape(message(lang, 'app.title'))}</title>"
        f'<link rel="icon" type="image/svg+xml" href="{asset("favicon.svg")}">'
        f'<link rel="stylesheet" href="{asset("assay.css")}"></head>'
        f'<body>{_top_bar(lang, user, csrf, active)}<main id="app" class="page page-{page}">{body}</main>'
        f'<script id="assay-boot" type="application/json">{_boot_json(boot)}</script>'
        f'<script type="module" src="{asset(page + ".js")}"></script></body></html>'
    )
