"""Settings: every environment variable assay reads, read once at the composition root (the CLI,
the library's defaults, the service's processes) and passed down. Nothing below reads the
environment itself: a process runner, a Ray place or a judge config that needs a variable gets it
from here (``Settings.environ`` is the environment the settings came from).

Each setting is declared once, as a field of ``Settings`` made by ``setting()``: its variable
(and fallbacks), default, unit, meaning and the section of the settings reference it belongs to.
``from_env`` reads the fields and the class docstring lists them all; the docs site's settings
reference (docs/reference/settings.md) is generated from ``declared()`` by ``tools/docgen``, and
``tests/test_settings_docs.py`` fails when the committed page is stale.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from assay.core.context import DEFAULT_CODE_TIMEOUT_MAX_MS
from assay.core.errors import AssayError

DEFAULT_DATABASE_URL = "sqlite:///./assay.db"
"""The embedded database: a file in the current directory, created and migrated on first start."""

RUN_ENGINES = ("local", "ray")
"""What grades a service run's slices: this process's threads, or a Ray cluster."""

SECTIONS = {
    "general": "what every way in reads (library, `assay run`, the service)",
    "service": "`assay serve`",
    "queue": "the run queue of `assay serve`, shared by every server of one database",
    "online": "online evaluation in `assay serve` (`POST /v1/traces`, online rules)",
}
"""The sections of the settings reference (docs/reference/settings.md), each with what it covers."""

RETIRED = {
    "ASSAY_ONLINE_WORKERS": "online rules' jobs are graded by the run slots (`ASSAY_RUN_SLOTS`), users served in "
                            "turn with the task runs",
}
"""Variables assay no longer reads, each with what took its place (a server warns when one is set)."""

_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"", "0", "false", "no", "off"})

Reader = Callable[[Mapping[str, str], "Var"], Any]


@dataclass(frozen=True, slots=True)
class Var:
    """How one setting is read and described."""

    names: tuple[str, ...]
    """Its variable, then the variables read when that one is unset."""
    meaning: str
    """What it does, in one Markdown sentence (the settings reference's *effect* column)."""
    read: Reader
    default: Any
    unit: str = ""
    minimum: int = 1
    section: str = "general"
    shown: str | None = None
    """The default in words, when the value alone would not say it."""

    def raw(self, env: Mapping[str, str]) -> str:
        """The first of ``names`` set to something other than blanks, stripped; else ""."""
        return next((v.strip() for n in self.names if (v := env.get(n, "")).strip()), "")

    def default_text(self) -> str:
        if self.shown is not None:
            return self.shown
        if isinstance(self.default, bool):
            return "on" if self.default else "off"
        if isinstance(self.default, int):
            return _amount(self.default, self.unit)
        if isinstance(self.default, frozenset):
            return "none" if not self.default else ", ".join(sorted(self.default))
        return "unset" if self.default is None else f"`{self.default}`"


def _flag(env: Mapping[str, str], var: Var) -> bool:
    value = var.raw(env).lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise AssayError(f"{var.names[0]}={env[var.names[0]]!r}: use 1 or 0 (also true/false, yes/no, on/off)")


def _whole(env: Mapping[str, str], var: Var) -> int:
    raw = var.raw(env)
    if not raw:
        return int(var.default)
    if not raw.isdigit() or int(raw) < var.minimum:
        raise AssayError(f"{var.names[0]}={raw!r}: use a whole number of {var.unit}, at least {var.minimum}")
    return int(raw)


def _text(env: Mapping[str, str], var: Var) -> str | None:
    return var.raw(env) or var.default


def _raw_text(env: Mapping[str, str], var: Var) -> str | None:
    """The value as it is set (not stripped): a path or a secret may hold spaces."""
    return next((v for n in var.names if (v := env.get(n))), var.default)


def _url(env: Mapping[str, str], var: Var) -> str | None:
    raw = var.raw(env).rstrip("/")
    if not raw:
        return None
    if not raw.startswith(("http://", "https://")) or len(raw) <= len("https://"):
        raise AssayError(f"{var.names[0]}={raw!r}: use an http:// or https:// address, such as http://127.0.0.1:8090")
    return raw


def _names(env: Mapping[str, str], var: Var) -> frozenset[str]:
    return frozenset(item.strip() for item in env.get(var.names[0], "").split(",") if item.strip())


def _urls(env: Mapping[str, str], var: Var) -> frozenset[str]:
    return frozenset(url.rstrip("/") for url in _names(env, var))


def _engine(env: Mapping[str, str], var: Var) -> str:
    raw = var.raw(env).lower() or RUN_ENGINES[0]
    if raw not in RUN_ENGINES:
        raise AssayError(f"{var.names[0]}={env[var.names[0]]!r}: use one of {', '.join(RUN_ENGINES)}")
    return raw


def _cache_path(env: Mapping[str, str], var: Var) -> str | None:
    raw = var.raw(env)
    if raw.lower() in ("off", "0", "false", "no"):
        return None
    if raw:
        return raw
    base = env.get("XDG_CACHE_HOME") or os.path.join(env.get("HOME") or os.path.expanduser("~"), ".cache")
    return os.path.join(base, "assay", "judge-cache.sqlite")


def setting(default: Any, names: str | tuple[str, ...], meaning: str, read: Reader = _whole, *,
            unit: str = "", minimum: int = 1, section: str = "general", shown: str | None = None,
            secret: bool = False) -> Any:
    """A field of ``Settings`` with the one declaration of its variable (``secret``: never in repr)."""
    names = (names,) if isinstance(names, str) else names
    var = Var(names, meaning, read, default, unit, minimum, section, shown)
    return field(default=default, repr=not secret, metadata={"var": var})


_MS = "milliseconds"


@dataclass(frozen=True, slots=True)
class Settings:
    # what every way in reads
    sandbox_allow_weak: bool = setting(False, "ASSAY_SANDBOX_ALLOW_WEAK", "`1`/`true`/`yes`/`on`: run code evaluators even when a required isolation layer is missing (loudly logged); `0`/`false`/`no`/`off` or unset: refuse", _flag)
    code_timeout_max_ms: int = setting(DEFAULT_CODE_TIMEOUT_MAX_MS, "ASSAY_CODE_TIMEOUT_MAX_MS", "the largest `timeout` a code evaluator may ask for; a spec asking for more is refused when it is validated, and the default is lowered to it", unit=_MS)
    node_binary: str | None = setting(None, "ASSAY_NODE", "the Node.js executable for Node evaluators", _raw_text, shown="`node` on `PATH`")
    locale: str = setting("C.UTF-8", "LANG", "the locale the Node.js sandbox workers run under (the system's own variable)", _raw_text)
    sandbox_url: str | None = setting(None, "SANDBOX_URL", "run code evaluators in the sandbox service (`assay sandbox serve`) at this `http(s)://` address; unset: the local pool", _url, shown="unset")
    sandbox_secret: str | None = setting(None, "SANDBOX_SECRET", "the bearer secret the sandbox service requires and its clients send (never shown or logged)", _raw_text, secret=True)
    debug: bool = setting(False, "ASSAY_DEBUG", "`1`: show the traceback of an internal error instead of one line", _flag)
    judge_base_url: str | None = setting(None, ("ASSAY_JUDGE_BASE_URL", "OPENAI_BASE_URL"), "the judges' OpenAI-compatible endpoint", _raw_text, shown="the OpenAI SDK's")
    judge_api_key: str | None = setting(None, ("ASSAY_JUDGE_API_KEY", "OPENAI_API_KEY"), "the judges' key (never shown, logged or written)", _raw_text, secret=True)
    judge_model: str | None = setting(None, "ASSAY_JUDGE_MODEL", "the model of judges whose config names none", _raw_text)
    judge_concurrency: int = setting(32, "ASSAY_JUDGE_CONCURRENCY", "judge calls in flight at once, in all", unit="calls")
    judge_timeout_s: int = setting(60, "ASSAY_JUDGE_TIMEOUT_S", "the time limit of one judge call", unit="seconds")
    judge_max_retries: int = setting(4, "ASSAY_JUDGE_MAX_RETRIES", "retries of a judge call on 429, 5xx and connection errors", unit="retries", minimum=0)
    judge_cache: str | None = setting(None, "ASSAY_JUDGE_CACHE", "the judges' cache file; `off` disables it", _cache_path, shown="`~/.cache/assay/judge-cache.sqlite` (under `XDG_CACHE_HOME` when set)")
    judge_prices: str | None = setting(None, "ASSAY_JUDGE_PRICES", 'a JSON price table `{"model": {"input": $/Mtok, "output": $/Mtok}}`, for `cost_usd` in results', _raw_text)
    local_judge_threads: int = setting(2, "ASSAY_LOCAL_JUDGE_THREADS", "threads of the local judge (`assay judge serve-local`, a toy model for trying assay out); its OpenMP threads sleep when idle (`OMP_WAIT_POLICY=passive`)", unit="threads")
    local_judge_context: int = setting(8192, "ASSAY_LOCAL_JUDGE_CONTEXT", "the local judge's context, shared by its parallel slots", unit="tokens", minimum=512)
    local_judge_parallel: int = setting(4, "ASSAY_LOCAL_JUDGE_PARALLEL", "judge calls the local judge decodes at once (more wait for a slot)", unit="calls")
    # assay serve
    database_url: str = setting(DEFAULT_DATABASE_URL, "ASSAY_DATABASE_URL", "SQLite, or PostgreSQL with `postgresql://user:password@host:port/db`", _text, section="service")
    database_pool_size: int = setting(5, "ASSAY_DATABASE_POOL_SIZE", "connections one server process keeps for requests; as many requests use the database at once. Grading has its own (`ASSAY_RUN_SLOTS` + 4, and 4 more at a peak), so a process opens at most pool + overflow + slots + 8 connections (20 by default): keep PostgreSQL's `max_connections` (100 by default) above that times every server's processes", unit="connections", section="service")
    database_pool_overflow: int = setting(5, "ASSAY_DATABASE_POOL_OVERFLOW", "connections a server process may add to its pool at a peak", unit="connections", minimum=0, section="service")
    database_queue: int = setting(500, "ASSAY_DATABASE_QUEUE", "requests that may wait for one of those connections; one more is answered 503 with `Retry-After` at once", unit="requests", minimum=0, section="service")
    database_wait_ms: int = setting(5000, "ASSAY_DATABASE_WAIT_MS", "how long a request waits in that line, then for a connection, before a 503 with `Retry-After`", unit=_MS, section="service")
    sqlite_busy_ms: int = setting(30_000, "ASSAY_SQLITE_BUSY_MS", "how long a SQLite writer waits for another before the database counts as locked (the run worker then waits and retries)", unit=_MS, section="service")
    api_max_body_bytes: int = setting(1 << 20, "ASSAY_API_MAX_BODY_BYTES", "the largest JSON request body", unit="bytes", section="service")
    api_max_upload_bytes: int = setting(1 << 30, "ASSAY_API_MAX_UPLOAD_BYTES", "the largest dataset upload (streamed into the database; a `.json` file, parsed whole, at most 32 MiB of it)", unit="bytes", section="service")
    api_max_code_bytes: int = setting(64 << 10, "ASSAY_API_MAX_CODE_BYTES", "the largest evaluator source", unit="bytes", section="service")
    dataset_max_rows: int = setting(10_000_000, "ASSAY_DATASET_MAX_ROWS", "the most rows of one dataset version", unit="rows", section="service")
    dataset_max_row_bytes: int = setting(1 << 20, "ASSAY_DATASET_MAX_ROW_BYTES", "the largest row, as stored JSON", unit="bytes", section="service")
    api_allow_programs: bool = setting(False, "ASSAY_API_ALLOW_PROGRAMS", "`1`: let API callers create `program` and `script` graders, which run programs of the server's machine", _flag, section="service")
    api_judge_base_urls: frozenset[str] = setting(frozenset(), "ASSAY_API_JUDGE_BASE_URLS", "comma-separated: the judge endpoints an evaluator created over the API may name (none: judges use the server's `ASSAY_JUDGE_*` settings)", _urls, section="service")
    api_judge_key_envs: frozenset[str] = setting(frozenset(), "ASSAY_API_JUDGE_KEY_ENVS", "comma-separated: the variables holding judge keys an evaluator created over the API may name", _names, section="service")
    run_concurrency: int = setting(8, "ASSAY_RUN_CONCURRENCY", "evaluations in flight at once in a task run, and in online slices whose evaluators wait on I/O", unit="evaluations", section="service")
    api_max_header_bytes: int = setting(32 << 10, "ASSAY_API_MAX_HEADER_BYTES", "the request line and headers together, counted as they are read off the socket; beyond, 431 and the connection closed", unit="bytes", minimum=1024, section="service")
    api_max_headers: int = setting(100, "ASSAY_API_MAX_HEADERS", "header lines of one request; beyond, 431", unit="headers", minimum=8, section="service")
    api_header_timeout_s: int = setting(10, "ASSAY_API_HEADER_TIMEOUT_S", "time to send the request line and headers, from the connection (or the request's first byte); beyond, 408 and closed", unit="seconds", section="service")
    api_body_timeout_s: int = setting(30, "ASSAY_API_BODY_TIMEOUT_S", "the longest pause of a body the server is waiting for; beyond, 408 and closed", unit="seconds", section="service")
    manual_dir: str | None = setting(None, "ASSAY_MANUAL_DIR", "the built docs site that `assay serve` serves at `/docs/site`, readable without a token (`make docs` builds it)", _raw_text, section="service", shown="`server/manual/` in the package")
    token_cache_ms: int = setting(500, "ASSAY_TOKEN_CACHE_MS", "how long a server keeps a token's answer: a token revoked elsewhere is refused within this plus one lookup", unit=_MS, minimum=0, section="service")
    # the run queue
    run_slice_size: int = setting(0, "ASSAY_RUN_SLICE_SIZE", "samples per slice, the unit a server leases; 0: `runner.sizing` decides from the run's graders (1000 when all are pure, 32 otherwise)", unit="samples", minimum=0, section="queue")
    run_slots: int = setting(2, "ASSAY_RUN_SLOTS", "slices one server grades at once: task runs' slices and online rules' jobs (in batches of 64), users served in turn", unit="slices", section="queue")
    run_lease_s: int = setting(30, "ASSAY_RUN_LEASE_S", "how long a slice stays leased without a heartbeat (they come every third of it): how soon a dead server's slices are taken over", unit="seconds", minimum=2, section="queue")
    run_pause_after_timeouts: int = setting(5, "ASSAY_RUN_PAUSE_AFTER_TIMEOUTS", "an evaluator that times out on this many samples in a row in a run is paused in that run (the rest of its samples are not sent to the sandbox) until its owner resumes or cancels the run; 0: never", unit="samples", minimum=0, section="queue")
    queue_poll_ms: int = setting(500, "ASSAY_QUEUE_POLL_MS", "how often an idle server looks for work", unit=_MS, section="queue")
    change_poll_ms: int = setting(1000, "ASSAY_CHANGE_POLL_MS", "how often a server reads the change counters (evaluator edits, token revocations made by any server)", unit=_MS, section="queue")
    user_code_cap: int = setting(2, "ASSAY_USER_CODE_CAP", "one user's code evaluations in flight at once in one server's sandbox, runs and `/test` together, and on the whole Ray cluster for runs graded there", unit="evaluations", section="queue")
    sandbox_workers: int = setting(0, "ASSAY_SANDBOX_WORKERS", "sandbox workers per language in one server; 0: four per core (code sleeping or blocked uses no CPU; code that runs long is lowered in CPU priority). With `SANDBOX_URL`, the sandbox service's `--workers` (0: one per core, its default)", unit="workers", minimum=0, section="queue")
    run_engine: str = setting("local", "ASSAY_RUN_ENGINE", "`ray`: grade the slices on a Ray cluster (`pip install 'assay[ray]'`)", _engine, section="queue")
    ray_address: str | None = setting(None, "RAY_ADDRESS", "the Ray cluster to grade on (Ray's own variable); unset: a local Ray on this machine's cores", _raw_text, section="queue")
    otlp_max_body_bytes: int = setting(16 << 20, "ASSAY_OTLP_MAX_BODY_BYTES", "the largest OTLP export request to `POST /v1/traces`, as sent and once inflated from gzip", unit="bytes", section="online")
    otlp_max_attribute_chars: int = setting(256 << 10, "ASSAY_OTLP_MAX_ATTRIBUTE_CHARS", "the longest text of one span attribute kept; longer text is cut there and the attribute's key listed in the span's `assay.truncated`", unit="characters", section="online")
    online_max_backlog: int = setting(100_000, "ASSAY_ONLINE_MAX_BACKLOG", "online gradings waiting plus spans stored but not yet looked at by the rules, on every server of the database, past which `POST /v1/traces` answers 429 with `Retry-After` instead of queueing more", unit="jobs and spans", section="online")
    online_max_group_spans: int = setting(1000, "ASSAY_ONLINE_MAX_GROUP_SPANS", "the most spans of one trace or conversation read into one sample", unit="spans", section="online")
    otlp_export_url: str | None = setting(None, "ASSAY_OTLP_EXPORT_URL", "an OTLP/HTTP endpoint (a collector, Phoenix, Logfire: the base URL, as `OTEL_EXPORTER_OTLP_ENDPOINT`) that every online verdict is sent to as a `gen_ai.evaluation.result` event at `/v1/logs`, parented to the graded span; unset: none is sent", _url, section="online")
    otlp_export_headers: str | None = setting(None, "ASSAY_OTLP_EXPORT_HEADERS", "headers of those requests, `key=value` pairs separated by commas, values URL-encoded (as `OTEL_EXPORTER_OTLP_HEADERS`)", _raw_text, section="online")
    environ: Mapping[str, str] = field(default_factory=dict, repr=False, compare=False)
    """The environment the settings came from: what programs run by graders inherit, and where a
    judge config that names its key's variable finds it."""

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Settings from ``environ`` (default ``os.environ``); AssayError names a bad variable."""
        env = dict(os.environ if environ is None else environ)
        values = {var_field.name: var.read(env, var) for var_field, var in declared()}
        return cls(**values, environ=env)


def retired(environ: Mapping[str, str]) -> list[str]:
    """A warning for each retired variable set in ``environ``."""
    return [f"{name} is no longer read: {why}" for name, why in RETIRED.items() if name in environ]


def declared() -> list[tuple[dataclasses.Field[Any], Var]]:
    """Every setting's field and declaration, in the order of ``Settings``."""
    return [(f, f.metadata["var"]) for f in dataclasses.fields(Settings) if "var" in f.metadata]


def _amount(value: int, unit: str) -> str:
    if unit == "bytes" and value:
        for size, suffix in ((1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB")):
            if value % size == 0:
                return f"{value // size} {suffix}"
    short = {"milliseconds": "ms", "seconds": "s"}.get(unit, unit)
    return f"{value:,} {short}".strip()


def _docstring() -> str:
    lines = ["Every setting, read from the environment by ``from_env`` (variable, field, default):", ""]
    for var_field, var in declared():
        also = "".join(f", else ``{n}``" for n in var.names[1:])
        lines.append(f"- ``{var.names[0]}``{also} (``{var_field.name}``, {var.default_text()}): {var.meaning}")
    return "\n".join(lines)


Settings.__doc__ = _docstring()
