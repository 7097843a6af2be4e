"""Bearer-token authentication: every route but ``/health`` needs ``Authorization: Bearer <token>``.

A token is looked up by its SHA-256; the answer is kept for ``ASSAY_TOKEN_CACHE_MS`` (0.5 s)
so a busy client does not cost a database query per request. Revoking a token grows the
database's ``tokens`` change counter in the same transaction (``assay.store.changes``):

- revoked over the API (``DELETE /api/v1/tokens/{id}``), the server that revoked it drops every
  kept answer before it answers (``revoked``): refused there at once;
- every other server (the other processes of ``--workers N``, other hosts, and all of them
  after ``assay tokens revoke``) drops its kept answers at its next poll of the counters
  (``ASSAY_CHANGE_POLL_MS``, 1 s), and in any case keeps an answer at most
  ``ASSAY_TOKEN_CACHE_MS``: refused within that plus one lookup.

When an answer expires, the requests that need it meanwhile wait for one lookup rather than
each making their own.
"""

from __future__ import annotations

import asyncio
import threading
import time
from dataclasses import dataclass

from starlette.concurrency import run_in_threadpool

from assay.store.changes import ChangeStamp
from assay.store.db import Database
from assay.store.users import hash_token, user_for_token

TOKEN_TTL_S = 0.5
_CACHE_LIMIT = 10_000


@dataclass(frozen=True, slots=True)
class Principal:
    """Who is calling."""

    id: str
    name: str
    is_admin: bool

    def may_change(self, owner_id: str | None) -> bool:
        """Users change their own rows; admins change any."""
        return self.is_admin or (owner_id is not None and owner_id == self.id)


class TokenCache:
    """Token hash → principal (or None for an unknown token), for ``ttl_s`` seconds."""

    def __init__(self, database: Database, ttl_s: float = TOKEN_TTL_S, stamp: ChangeStamp | None = None) -> None:
        self.database = database
        self.ttl_s = ttl_s
        self.stamp = stamp if stamp is not None else ChangeStamp(None, "tokens")
        self._entries: dict[str, tuple[float, Principal | None]] = {}
        self._lock = threading.Lock()
        self._pending: dict[str, asyncio.Future[Principal | None]] = {}
        self._seen = self.stamp.read()

    def cached(self, token: str) -> tuple[bool, Principal | None]:
        """``(True, principal or None)`` when the answer is known and fresh; ``(False, None)`` otherwise."""
        seen = self.stamp.read()
        if seen != self._seen:  # a token was revoked: no kept answer can be trusted
            with self._lock:
                self._seen = seen
                self._entries.clear()
            return False, None
        entry = self._entries.get(hash_token(token))
        if entry is not None and entry[0] > time.monotonic():
            return True, entry[1]
        return False, None

    def lookup(self, token: str) -> Principal | None:
        """Ask the database (blocking: call from a worker thread) and remember the answer,
        unless a token was revoked meanwhile (the answer may predate it)."""
        before = self.stamp.read()
        with self.database.session() as session:
            user = user_for_token(session, token)
            principal = None if user is None else Principal(user.id, user.name, user.is_admin)
        with self._lock:
            if len(self._entries) >= _CACHE_LIMIT:
                self._entries.clear()
            if before == self._seen == self.stamp.read():
                self._entries[hash_token(token)] = (time.monotonic() + self.ttl_s, principal)
        return principal

    def revoked(self) -> None:
        """This process has just committed a revocation: drop every kept answer now, and see
        the grown counter at once (a lookup under way meanwhile keeps nothing)."""
        if self.stamp.changes is not None:
            self.stamp.changes.refresh()
        with self._lock:
            self._seen = self.stamp.read()
            self._entries.clear()

    async def fetch(self, token: str) -> Principal | None:
        """``lookup`` from the event loop, on a worker thread; concurrent callers for one token
        share a single lookup."""
        key = hash_token(token)
        pending = self._pending.get(key)
        if pending is None:
            pending = asyncio.ensure_future(run_in_threadpool(self.lookup, token))
            self._pending[key] = pending
            pending.add_done_callback(lambda _done: self._pending.pop(key, None))
        return await asyncio.shield(pending)
