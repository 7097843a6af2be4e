"""Settings: every ``ASSAY_*`` environment variable, read once at the composition root (the
CLI, the library's defaults, the service) and passed down. Nothing below reads the
environment itself.

- ``ASSAY_SANDBOX_ALLOW_WEAK`` (``sandbox_allow_weak``, off): run code evaluators even when an
  isolation layer is missing;
- ``ASSAY_CODE_TIMEOUT_MAX_MS`` (``code_timeout_max_ms``, 60000): the largest ``timeout`` a code
  evaluator may ask for;
- ``ASSAY_NODE`` (``node_binary``, ``node`` on PATH): the Node.js executable for Node evaluators;
- ``ASSAY_DEBUG`` (``debug``, off): the CLI shows a traceback for internal errors.

The sandbox service (``assay sandbox serve``; the product spec's names, without prefix):

- ``SANDBOX_URL`` (``sandbox_url``): when set, code evaluators run in the sandbox service at
  this ``http(s)://`` address instead of the local pool;
- ``SANDBOX_SECRET`` (``sandbox_secret``, never shown or logged): the bearer secret the
  service requires and its clients send.

LLM judges (``assay.judges``):

- ``ASSAY_JUDGE_BASE_URL``, else ``OPENAI_BASE_URL`` (``judge_base_url``): the OpenAI-compatible
  endpoint; unset means the OpenAI SDK's default;
- ``ASSAY_JUDGE_API_KEY``, else ``OPENAI_API_KEY`` (``judge_api_key``, never shown or logged);
- ``ASSAY_JUDGE_MODEL`` (``judge_model``): the model for judges whose config names none;
- ``ASSAY_JUDGE_CONCURRENCY`` (``judge_concurrency``, 32): judge calls in flight at once, in all;
- ``ASSAY_JUDGE_TIMEOUT_S`` (``judge_timeout_s``, 60): the time limit of one call;
- ``ASSAY_JUDGE_MAX_RETRIES`` (``judge_max_retries``, 4): retries on 429, 5xx and connection errors;
- ``ASSAY_JUDGE_CACHE`` (``judge_cache``, ``~/.cache/assay/judge-cache.sqlite``; ``off`` disables);
- ``ASSAY_JUDGE_PRICES`` (``judge_prices``): a JSON file of prices per million tokens,
  ``{"model": {"input": 0.15, "output": 0.6}}``, for ``cost_usd`` in results.

The service (``assay serve``):

- ``ASSAY_DATABASE_URL`` (``database_url``, ``sqlite:///./assay.db``): SQLite, or PostgreSQL
  with ``postgresql://user:password@host:port/db`` (driven by psycopg 3);
- ``ASSAY_DATABASE_POOL_SIZE`` (``database_pool_size``, 5) and ``ASSAY_DATABASE_POOL_OVERFLOW``
  (``database_pool_overflow``, 5): the connections one server process keeps open for requests,
  and how many more it may open at a peak; as many requests use the database at once (more
  would only queue for the same cores). Grading (run slots, heartbeat, pollers, ``/ready``,
  ``/metrics``) has connections of its own besides, ``run_slots`` + 4 kept and 4 more at a peak,
  so a crowd of readers never starves a run. A server process opens at most pool + overflow +
  ``run_slots`` + 8 connections (20 by default): keep PostgreSQL's ``max_connections`` (100 by
  default) above that times the processes (``--workers``) of every server;
- ``ASSAY_DATABASE_QUEUE`` (``database_queue``, 500): requests that may wait for one of those
  connections; one more is refused at once with 503 and ``Retry-After``;
- ``ASSAY_DATABASE_WAIT_MS`` (``database_wait_ms``, 5000): how long a request waits in that queue
  (and then for a connection) before it is refused with 503 and ``Retry-After``;
- ``ASSAY_SQLITE_BUSY_MS`` (``sqlite_busy_ms``, 30000): how long a SQLite writer waits for another
  before the database counts as locked (the run worker then waits and retries, ``store.outage``);
- ``ASSAY_API_MAX_BODY_BYTES`` (``api_max_body_bytes``, 1 MiB): the largest JSON request body;
- ``ASSAY_API_MAX_UPLOAD_BYTES`` (``api_max_upload_bytes``, 1 GiB): the largest dataset upload
  (streamed into the database; a ``.json`` file, parsed whole, at most 32 MiB of it);
- ``ASSAY_DATASET_MAX_ROWS`` (``dataset_max_rows``, 10,000,000): the most rows of one dataset version;
- ``ASSAY_DATASET_MAX_ROW_BYTES`` (``dataset_max_row_bytes``, 1 MiB): the largest row, as stored JSON;
- ``ASSAY_API_MAX_CODE_BYTES`` (``api_max_code_bytes``, 64 KiB): the largest evaluator source;
- ``ASSAY_API_ALLOW_PROGRAMS`` (``api_allow_programs``, off): let API callers create ``program``
  and ``script`` graders, which run programs of the server's machine;
- ``ASSAY_API_JUDGE_BASE_URLS`` and ``ASSAY_API_JUDGE_KEY_ENVS`` (comma-separated, empty): the
  judge endpoints and key variables an evaluator created over the API may name;
- ``ASSAY_RUN_CONCURRENCY`` (``run_concurrency``, 8): evaluations in flight at once in a task run.

The edge of the service (``assay.server.protocol`` and ``assay.server.edge``), per request:

- ``ASSAY_API_MAX_HEADER_BYTES`` (``api_max_header_bytes``, 32 KiB): the request line and headers
  together, counted as they are read off the socket; beyond it, 431 and the connection closed;
- ``ASSAY_API_MAX_HEADERS`` (``api_max_headers``, 100): header lines of one request; beyond, 431;
- ``ASSAY_API_HEADER_TIMEOUT_S`` (``api_header_timeout_s``, 10): time to send the request line
  and headers, from the connection (or the request's first byte); beyond it, 408 and closed;
- ``ASSAY_API_BODY_TIMEOUT_S`` (``api_body_timeout_s``, 30): the longest pause of a body the
  server is waiting for; beyond it, 408 and closed;
- ``ASSAY_TOKEN_CACHE_MS`` (``token_cache_ms``, 500): how long a server keeps a token's answer
  (a revoked token is refused by every server within this plus one lookup).

The run queue (``assay.server.worker``), shared by every server of one database:

- ``ASSAY_RUN_SLICE_SIZE`` (``run_slice_size``, 0): samples per slice, the unit a server leases;
  0 lets ``runner.sizing`` decide from the run's graders (1000 when all are pure, 32 otherwise);
- ``ASSAY_RUN_SLOTS`` (``run_slots``, 2): slices one server grades at once;
- ``ASSAY_RUN_LEASE_S`` (``run_lease_s``, 30): how long a slice stays leased without a heartbeat
  (heartbeats come every third of it): a dead server's slices are taken over after this;
- ``ASSAY_QUEUE_POLL_MS`` (``queue_poll_ms``, 500): how often an idle server looks for work;
- ``ASSAY_CHANGE_POLL_MS`` (``change_poll_ms``, 1000): how often a server reads the change
  counters (evaluator edits, token revocations made by any server);
- ``ASSAY_USER_CODE_CAP`` (``user_code_cap``, 2): one user's code evaluations (sandbox batches)
  in flight at once in one server, runs and ``/test`` together; users take free sandbox slots in
  turn; with ``ASSAY_RUN_ENGINE=ray``, also over the whole Ray cluster (``server.ray_permits``);
- ``ASSAY_SANDBOX_WORKERS`` (``sandbox_workers``, 0: four per core): sandbox workers per language
  in one server. More than the cores, so that code sleeping or blocked (which uses no CPU) does
  not keep a worker from others; code that runs long is lowered in CPU priority (``sandbox.priority``).
  With ``SANDBOX_URL``, set it to the sandbox service's ``--workers`` (default: one per core);
- ``ASSAY_RUN_ENGINE`` (``run_engine``, ``local``): ``ray`` grades the slices on a Ray cluster
  (Ray's own ``RAY_ADDRESS``; a local Ray when unset).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

from assay.core.context import DEFAULT_CODE_TIMEOUT_MAX_MS
from assay.core.errors import AssayError

DEFAULT_DATABASE_URL = "sqlite:///./assay.db"
"""The embedded database: a file in the current directory, created and migrated on first start."""

RUN_ENGINES = ("local", "ray")
"""What grades a service run's slices: this process's threads, or a Ray cluster."""

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"", "0", "false", "no", "off"})


@dataclass(frozen=True, slots=True)
class Settings:
    sandbox_allow_weak: bool = False
    code_timeout_max_ms: int = DEFAULT_CODE_TIMEOUT_MAX_MS
    node_binary: str | None = None
    debug: bool = False
    sandbox_url: str | None = None
    sandbox_secret: str | None = field(default=None, repr=False)
    judge_base_url: str | None = None
    judge_api_key: str | None = field(default=None, repr=False)
    judge_model: str | None = None
    judge_concurrency: int = 32
    judge_timeout_s: int = 60
    judge_max_retries: int = 4
    judge_cache: str | None = None
    judge_prices: str | None = None
    database_url: str = DEFAULT_DATABASE_URL
    database_pool_size: int = 5
    database_pool_overflow: int = 5
    database_queue: int = 500
    database_wait_ms: int = 5000
    sqlite_busy_ms: int = 30_000
    api_max_body_bytes: int = 1 << 20
    api_max_upload_bytes: int = 1 << 30
    dataset_max_rows: int = 10_000_000
    dataset_max_row_bytes: int = 1 << 20
    api_max_code_bytes: int = 64 << 10
    api_allow_programs: bool = False
    api_judge_base_urls: frozenset[str] = frozenset()
    api_judge_key_envs: frozenset[str] = frozenset()
    run_concurrency: int = 8
    run_slice_size: int = 0
    run_slots: int = 2
    run_lease_s: int = 30
    queue_poll_ms: int = 500
    change_poll_ms: int = 1000
    user_code_cap: int = 2
    sandbox_workers: int = 0
    run_engine: str = "local"
    api_max_header_bytes: int = 32 << 10
    api_max_headers: int = 100
    api_header_timeout_s: int = 10
    api_body_timeout_s: int = 30
    token_cache_ms: int = 500
    environ: Mapping[str, str] = field(default_factory=dict, repr=False, compare=False)
    """The environment the settings came from, for judge configs that name their key's variable."""

    def service_sandbox_workers(self) -> int:
        """Sandbox workers per language in one server: ``sandbox_workers``, else four per core,
        or, when ``sandbox_url`` names a sandbox service, one per core (its ``--workers`` default)."""
        return self.sandbox_workers or (1 if self.sandbox_url else 4) * (os.cpu_count() or 1)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Settings from ``environ`` (default ``os.environ``); AssayError names a bad variable."""
        env = os.environ if environ is None else environ
        return cls(
            sandbox_allow_weak=_flag(env, "ASSAY_SANDBOX_ALLOW_WEAK"),
            code_timeout_max_ms=_positive_int(env, "ASSAY_CODE_TIMEOUT_MAX_MS", DEFAULT_CODE_TIMEOUT_MAX_MS),
            node_binary=env.get("ASSAY_NODE") or None,
            debug=_flag(env, "ASSAY_DEBUG"),
            sandbox_url=_url(env, "SANDBOX_URL"),
            sandbox_secret=env.get("SANDBOX_SECRET") or None,
            judge_base_url=env.get("ASSAY_JUDGE_BASE_URL") or env.get("OPENAI_BASE_URL") or None,
            judge_api_key=env.get("ASSAY_JUDGE_API_KEY") or env.get("OPENAI_API_KEY") or None,
            judge_model=env.get("ASSAY_JUDGE_MODEL") or None,
            judge_concurrency=_positive_int(env, "ASSAY_JUDGE_CONCURRENCY", 32, "calls"),
            judge_timeout_s=_positive_int(env, "ASSAY_JUDGE_TIMEOUT_S", 60, "seconds"),
            judge_max_retries=_positive_int(env, "ASSAY_JUDGE_MAX_RETRIES", 4, "retries", minimum=0),
            judge_cache=_cache_path(env),
            judge_prices=env.get("ASSAY_JUDGE_PRICES") or None,
            database_url=env.get("ASSAY_DATABASE_URL", "").strip() or DEFAULT_DATABASE_URL,
            database_pool_size=_positive_int(env, "ASSAY_DATABASE_POOL_SIZE", 5, "connections"),
            database_pool_overflow=_positive_int(env, "ASSAY_DATABASE_POOL_OVERFLOW", 5, "connections", minimum=0),
            database_queue=_positive_int(env, "ASSAY_DATABASE_QUEUE", 500, "requests", minimum=0),
            database_wait_ms=_positive_int(env, "ASSAY_DATABASE_WAIT_MS", 5000),
            sqlite_busy_ms=_positive_int(env, "ASSAY_SQLITE_BUSY_MS", 30_000),
            api_max_body_bytes=_positive_int(env, "ASSAY_API_MAX_BODY_BYTES", 1 << 20, "bytes"),
            api_max_upload_bytes=_positive_int(env, "ASSAY_API_MAX_UPLOAD_BYTES", 1 << 30, "bytes"),
            dataset_max_rows=_positive_int(env, "ASSAY_DATASET_MAX_ROWS", 10_000_000, "rows"),
            dataset_max_row_bytes=_positive_int(env, "ASSAY_DATASET_MAX_ROW_BYTES", 1 << 20, "bytes"),
            api_max_code_bytes=_positive_int(env, "ASSAY_API_MAX_CODE_BYTES", 64 << 10, "bytes"),
            api_allow_programs=_flag(env, "ASSAY_API_ALLOW_PROGRAMS"),
            api_judge_base_urls=frozenset(u.rstrip("/") for u in _list(env, "ASSAY_API_JUDGE_BASE_URLS")),
            api_judge_key_envs=frozenset(_list(env, "ASSAY_API_JUDGE_KEY_ENVS")),
            run_concurrency=_positive_int(env, "ASSAY_RUN_CONCURRENCY", 8, "evaluations"),
            run_slice_size=_positive_int(env, "ASSAY_RUN_SLICE_SIZE", 0, "samples", minimum=0),
            run_slots=_positive_int(env, "ASSAY_RUN_SLOTS", 2, "slices"),
            run_lease_s=_positive_int(env, "ASSAY_RUN_LEASE_S", 30, "seconds", minimum=2),
            queue_poll_ms=_positive_int(env, "ASSAY_QUEUE_POLL_MS", 500),
            change_poll_ms=_positive_int(env, "ASSAY_CHANGE_POLL_MS", 1000),
            user_code_cap=_positive_int(env, "ASSAY_USER_CODE_CAP", 2, "evaluations"),
            sandbox_workers=_positive_int(env, "ASSAY_SANDBOX_WORKERS", 0, "workers", minimum=0),
            run_engine=_choice(env, "ASSAY_RUN_ENGINE", RUN_ENGINES),
            api_max_header_bytes=_positive_int(env, "ASSAY_API_MAX_HEADER_BYTES", 32 << 10, "bytes", minimum=1024),
            api_max_headers=_positive_int(env, "ASSAY_API_MAX_HEADERS", 100, "headers", minimum=8),
            api_header_timeout_s=_positive_int(env, "ASSAY_API_HEADER_TIMEOUT_S", 10, "seconds"),
            api_body_timeout_s=_positive_int(env, "ASSAY_API_BODY_TIMEOUT_S", 30, "seconds"),
            token_cache_ms=_positive_int(env, "ASSAY_TOKEN_CACHE_MS", 500, minimum=0),
            environ=dict(env),
        )


def _flag(env: Mapping[str, str], name: str) -> bool:
    value = env.get(name, "").strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise AssayError(f"{name}={env[name]!r}: use 1 or 0 (also true/false, yes/no, on/off)")


def _choice(env: Mapping[str, str], name: str, choices: tuple[str, ...]) -> str:
    raw = env.get(name, "").strip().lower() or choices[0]
    if raw not in choices:
        raise AssayError(f"{name}={env[name]!r}: use one of {', '.join(choices)}")
    return raw


def _url(env: Mapping[str, str], name: str) -> str | None:
    raw = env.get(name, "").strip().rstrip("/")
    if not raw:
        return None
    if not raw.startswith(("http://", "https://")) or len(raw) <= len("https://"):
        raise AssayError(f"{name}={raw!r}: use an http:// or https:// address, such as http://127.0.0.1:8090")
    return raw


def _list(env: Mapping[str, str], name: str) -> list[str]:
    return [item.strip() for item in env.get(name, "").split(",") if item.strip()]


def _positive_int(env: Mapping[str, str], name: str, default: int, unit: str = "milliseconds", *,
                  minimum: int = 1) -> int:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    if not raw.isdigit() or int(raw) < minimum:
        raise AssayError(f"{name}={raw!r}: use a whole number of {unit}, at least {minimum}")
    return int(raw)


def _cache_path(env: Mapping[str, str]) -> str | None:
    raw = env.get("ASSAY_JUDGE_CACHE", "").strip()
    if raw.lower() in ("off", "0", "false", "no"):
        return None
    if raw:
        return raw
    base = env.get("XDG_CACHE_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".cache")
    return os.path.join(base, "assay", "judge-cache.sqlite")
