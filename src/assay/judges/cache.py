"""A content-addressed cache of judge replies in SQLite, so re-running a suite calls the
endpoint only for what changed.

The key hashes the request's ``cache_key`` (the grader's stable content: spec, rubric,
rendered messages) with everything else that changes the answer: model, endpoint, sampling
parameters and the output schema. Only successful replies are stored; a hit comes back with
``cached=True`` and ``attempts=0`` (no call was made).

The cache is an optimisation, never a reason to fail: a file that is damaged, locked past the
busy timeout or cannot be written turns the cache off for the rest of the process with one
warning. One connection serves every thread, behind a lock (SQLite calls are short and the
judge's latency dwarfs them).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
import threading
import time
from typing import Any

from assay.core.judge import JudgeReply, JudgeRequest

log = logging.getLogger(__name__)

_SCHEMA = """CREATE TABLE IF NOT EXISTS replies (
    key TEXT PRIMARY KEY,
    reply TEXT NOT NULL,
    created REAL NOT NULL
)"""
_VERSION = 1  # bump when the key's recipe or the stored reply's shape changes


def cache_key(request: JudgeRequest, model: str, base_url: str) -> str | None:
    """The content address of ``request`` sent to ``model`` at ``base_url``; None when the
    request opts out (no ``cache_key``)."""
    if request.cache_key is None:
        return None
    material = {"v": _VERSION, "key": request.cache_key, "model": model, "base_url": base_url.rstrip("/"),
                "temperature": request.temperature, "max_tokens": request.max_tokens, "seed": request.seed,
                "schema": request.schema}
    if request.top_logprobs is not None:  # only then: the keys of every other request stay as they were
        material["top_logprobs"] = request.top_logprobs
    blob = json.dumps(material, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class JudgeCache:
    """Judge replies by content address, in the SQLite file at ``path`` (its folder is created).

    ``read=False`` (``assay run --no-cache``) never serves a hit but still stores fresh replies,
    so the run after it is served the refreshed answers.
    """

    def __init__(self, path: str, *, read: bool = True, busy_timeout_s: float = 5.0) -> None:
        self.path = path
        self.read = read
        self.busy_timeout_s = busy_timeout_s
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._broken = False
        self._opened = False

    @property
    def enabled(self) -> bool:
        return not self._broken

    def get(self, key: str) -> JudgeReply | None:
        """The stored reply for ``key`` (``cached=True``), or None."""
        if not self.read:
            return None
        with self._lock:
            conn = self._connection()
            if conn is None:
                return None
            try:
                row = conn.execute("SELECT reply FROM replies WHERE key = ?", (key,)).fetchone()
            except sqlite3.Error as exc:
                self._disable(exc)
                return None
        if row is None:
            return None
        try:
            return _decode(row[0])
        except (ValueError, TypeError, KeyError):
            return None  # a row we cannot read is a miss; the fresh reply overwrites it

    def put(self, key: str, reply: JudgeReply) -> None:
        """Store ``reply`` under ``key`` if it is a success; failures are never cached."""
        if not reply.ok or reply.cached:
            return
        blob = _encode(reply)
        with self._lock:
            conn = self._connection()
            if conn is None:
                return
            try:
                with conn:
                    conn.execute("INSERT OR REPLACE INTO replies (key, reply, created) VALUES (?, ?, ?)",
                                 (key, blob, time.time()))
            except sqlite3.Error as exc:
                self._disable(exc)

    def close(self) -> None:
        with self._lock:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    def _connection(self) -> sqlite3.Connection | None:
        """The open connection, opened on first use (suites without judges never touch the file)."""
        if self._broken:
            return None
        if self._opened:
            return self._conn
        self._opened = True
        try:
            folder = os.path.dirname(os.path.abspath(self.path))
            os.makedirs(folder, exist_ok=True)
            conn = sqlite3.connect(self.path, timeout=self.busy_timeout_s, check_same_thread=False)
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=NORMAL")
            conn.execute(_SCHEMA)
            conn.commit()
        except (OSError, sqlite3.Error) as exc:
            self._disable(exc)
            return None
        self._conn = conn
        return conn

    def _disable(self, exc: BaseException) -> None:
        if not self._broken:
            log.warning("judge cache %s is unusable (%s); continuing without a cache", self.path, exc)
        self._broken = True
        if self._conn is not None:
            try:
                self._conn.close()
            except sqlite3.Error:
                pass
            self._conn = None


def _encode(reply: JudgeReply) -> str:
    return json.dumps({"text": reply.text, "parsed": reply.parsed, "model": reply.model, "usage": reply.usage,
                       "cost_usd": reply.cost_usd, "latency_ms": reply.latency_ms,
                       "top_logprobs": reply.top_logprobs}, ensure_ascii=False)


def _decode(blob: str) -> JudgeReply:
    data: dict[str, Any] = json.loads(blob)
    return JudgeReply(text=data["text"], parsed=data.get("parsed"), model=data.get("model"),
                      usage=dict(data.get("usage") or {}), cost_usd=data.get("cost_usd"),
                      cached=True, latency_ms=0.0, attempts=0, top_logprobs=data.get("top_logprobs"))
