"""Browser sessions: an API token kept in an HttpOnly, SameSite cookie, and CSRF protection.

The session cookie holds the token the user signed in with, so revoking the token ends the
session too. Requests from the pages to the JSON API (``/api/v1``) and to the pages' own API
carry the cookie instead of ``Authorization``; ``CookieAuth`` turns it into the bearer header
the API already checks, after refusing any change (a method other than GET, HEAD, OPTIONS)
that lacks the session's CSRF token or comes from another origin. Clients that send
``Authorization`` themselves are left alone.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import urlsplit

from starlette.requests import cookie_parser

from assay.core.messages import Phrase
from assay.server.errors import send_error

SESSION_COOKIE = "assay_session"
SIGNIN_COOKIE = "assay_signin"
CSRF_HEADER = "x-csrf-token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
SESSION_MAX_AGE_S = 14 * 24 * 3600

CROSS_SITE = Phrase("api.cross_site", "cross-site request refused: the Origin is not this server")
NO_CSRF = Phrase("api.csrf", "missing or wrong CSRF token (X-CSRF-Token): reload the page and try again")

Scope = MutableMapping[str, Any]
ASGIApp = Callable[[Scope, Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]], Awaitable[None]]


def csrf_token(session_token: str) -> str:
    """The CSRF token of a session: derived from its secret, which a script on another site
    can neither read (HttpOnly) nor guess."""
    return hmac.new(session_token.encode(), b"assay-pages-csrf", hashlib.sha256).hexdigest()


def csrf_matches(session_token: str, sent: str | None) -> bool:
    return bool(sent) and hmac.compare_digest(csrf_token(session_token), sent or "")


def new_signin_nonce() -> str:
    """A one-form secret for the sign-in form (double-submitted: cookie and field)."""
    return secrets.token_urlsafe(24)


def same_origin(headers: dict[str, str], scheme: str) -> bool:
    """True unless an ``Origin`` (or, lacking it, a ``Referer``) names another site than ``Host``."""
    source = headers.get("origin") or headers.get("referer")
    if not source or source == "null":
        return source != "null"
    parts = urlsplit(source)
    return parts.netloc == headers.get("host", "") and parts.scheme in (scheme, "http", "https")


def cookie_options(secure: bool, max_age: int | None = SESSION_MAX_AGE_S) -> dict[str, Any]:
    return {"httponly": True, "samesite": "lax", "secure": secure, "path": "/", "max_age": max_age}


class CookieAuth:
    """ASGI middleware: the session cookie stands in for ``Authorization: Bearer`` on ``prefixes``."""

    def __init__(self, app: ASGIApp, prefixes: tuple[str, ...]) -> None:
        self.app = app
        self.prefixes = prefixes

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not scope["path"].startswith(self.prefixes):
            await self.app(scope, receive, send)
            return
        raw = scope.get("headers") or []
        # The API's own clients send a bearer token and no cookie: pass them on without
        # decoding every header (the common case, on the service's hot path).
        names = {k.lower() for k, _ in raw}
        if b"authorization" in names or b"cookie" not in names:
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in raw}
        token = cookie_parser(headers.get("cookie", "")).get(SESSION_COOKIE)
        if not token:
            await self.app(scope, receive, send)
            return
        if scope["method"] not in SAFE_METHODS:
            problem = None
            if not same_origin(headers, scope.get("scheme", "http")):
                problem = CROSS_SITE()
            elif not csrf_matches(token, headers.get(CSRF_HEADER)):
                problem = NO_CSRF()
            if problem is not None:
                await _refuse(send, problem)
                return
        scope = dict(scope)
        scope["headers"] = [*raw, (b"authorization", f"Bearer {token}".encode("latin-1"))]
        await self.app(scope, receive, send)


async def _refuse(send: Any, message: str) -> None:
    await send_error(send, 403, message)
