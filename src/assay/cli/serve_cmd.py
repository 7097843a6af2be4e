"""Bodies of ``assay serve``, ``assay db``, ``assay users`` and ``assay tokens``: read the
settings, open the database, delegate to ``assay.server`` and ``assay.store``."""

from __future__ import annotations

import dataclasses
import logging
import logging.config
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import typer

from assay.settings import Settings

if TYPE_CHECKING:
    from fastapi import FastAPI

    from assay.judges.local import LocalJudge
    from assay.store import Database


def settings_with(database_url: str | None) -> Settings:
    """The environment's settings, with ``--database-url`` over ``ASSAY_DATABASE_URL``."""
    settings = Settings.from_env()
    if database_url:
        settings = dataclasses.replace(settings, database_url=database_url)
    return settings


def _database(database_url: str | None) -> Database:
    from assay.store import Database, upgrade

    database = Database(settings_with(database_url).database_url)
    upgrade(database)
    return database


DEMO_DATABASE = "sqlite:///./assay-demo.db"


def serve(host: str, port: int, database_url: str | None, log_level: str, workers: int = 1,
          demo: bool = False, log_format: str = "text") -> int:
    from assay.server.logs import log_config, log_stray_output
    from assay.store import redact

    if demo:
        database_url = database_url or DEMO_DATABASE
    settings = settings_with(database_url)
    config = log_config(log_format, log_level)
    logging_options: dict[str, Any] = {} if config is None else {"log_config": config}
    if config is not None:  # every line on stderr is JSON from the first one
        logging.config.dictConfig(config)
        log_stray_output()
    say = _say(config is not None)
    say(f"assay serve: http://{host}:{port} (API under /api/v1, docs at /docs; database "
        f"{redact(settings.database_url)}{f'; {workers} processes' if workers > 1 else ''})")
    local = _local_judge(settings, say) if demo and workers == 1 else None
    if local is not None:  # API-made evaluators may name its address (the toy evaluator does)
        settings = dataclasses.replace(settings, api_judge_base_urls=settings.api_judge_base_urls | {local.url})
    try:
        if demo:
            _demo(settings.database_url, f"http://{host}:{port}", say, local)
        _welcome(database_url, f"http://{host}:{port}", say)
        return _run(settings, host, port, database_url, log_level, workers, config, logging_options)
    finally:
        if local is not None:
            local.stop()


WORKER_PING_S = 60


def _run(settings: Settings, host: str, port: int, database_url: str | None, log_level: str, workers: int,
         config: Any, logging_options: dict[str, Any]) -> int:
    import uvicorn

    from assay.server import create_app
    from assay.server.protocol import PROTOCOL, BoundedHttpProtocol, HeadLimits

    BoundedHttpProtocol.limits = HeadLimits.of(settings)  # the processes of --workers N read the environment

    def run(app: FastAPI | str, factory: bool = False, processes: int | None = None) -> None:
        # timeout_keep_alive: an idle kept-alive connection is closed after it; a request's head
        # and body have their own limits (server.protocol, server.edge). A process of --workers N
        # that has not answered its supervisor's ping within WORKER_PING_S is restarted: uvicorn's 5 s
        # restarted every process, for ever, on a machine too loaded to import the app that fast.
        uvicorn.run(app, host=host, port=port, log_level=log_level, access_log=log_level == "debug",
                    timeout_graceful_shutdown=10, factory=factory, workers=processes, http=PROTOCOL,
                    timeout_worker_healthcheck=WORKER_PING_S,
                    h11_max_incomplete_event_size=settings.api_max_header_bytes, **logging_options)

    if workers == 1:
        run(create_app(settings, settle_heap=True))
        return 0
    # uvicorn starts each process afresh: they build the app from the environment, so the
    # --database-url given here is passed on there, and the schema is migrated once, first.
    _database(database_url).dispose()
    if database_url:
        os.environ["ASSAY_DATABASE_URL"] = database_url
    run("assay.server.app:app_from_env", factory=True, processes=workers)
    return 0


def _say(as_log: bool) -> Callable[[str], None]:
    """How ``assay serve`` tells its operator something: a line on stderr, or under
    ``--log-format json`` a log record (logger ``assay.serve``, always shown)."""
    if not as_log:
        return lambda text: typer.echo(text, err=True)
    log = logging.getLogger("assay.serve")  # shown at every --log-level (server.logs)
    return lambda text: log.info("%s", text)


def _demo(database_url: str, url: str, say: Callable[[str], None], local: LocalJudge | None) -> None:
    """Sign-in details of the demo workspace, which is filled once the server answers."""
    from assay.server.demo import demo_token, seed_in_background

    token = demo_token(database_url)
    say(f"demo workspace: open {url}/signin and paste this token (user 'demo'):\n{token}")
    seed_in_background(url.replace("0.0.0.0", "127.0.0.1"), token, (local.url, local.model) if local else None)


def _local_judge(settings: Settings, say: Callable[[str], None]) -> LocalJudge | None:
    """The local toy judge for the demo's toy LLM evaluator, started in a child process;
    None (and a line saying how to get it) when ``assay[local-judge]`` is not installed."""
    from assay.judges.local import LocalJudge, LocalOptions
    from assay.judges.local.find import available

    missing = available()
    if missing is not None:
        say(f"demo: no toy LLM evaluator ({missing})")
        return None
    options = LocalOptions(threads=settings.local_judge_threads, context=settings.local_judge_context,
                           parallel=settings.local_judge_parallel)
    local = LocalJudge.start(options, environ=settings.environ)
    say(f"demo: a toy LLM judge (SmolLM2-135M, not for real grading) answers at {local.url} (pid {local.pid}); "
        "the evaluator 玩具评审（本地小模型） uses it")
    return local


def _welcome(database_url: str | None, url: str, say: Callable[[str], None]) -> None:
    """On the first start (no users yet), create an admin and print its token, once."""
    from assay.store.users import first_admin

    database = _database(database_url)
    try:
        with database.session() as session:
            new = first_admin(session)
    finally:
        database.dispose()
    if new is not None:
        say(f"first start: created the admin user {new.user_name!r}. Sign in at {url}/signin with this "
            f"token (shown once; more with `assay tokens create NAME`):\n{new.secret}")


def db_upgrade(database_url: str | None) -> int:
    from assay.store import current_revision, redact

    database = _database(database_url)
    try:
        typer.echo(f"{redact(database.url)}: schema at revision {current_revision(database)}")
    finally:
        database.dispose()
    return 0


def users_create(name: str, admin: bool, database_url: str | None) -> int:
    from assay.store.users import create_user

    database = _database(database_url)
    try:
        with database.session() as session:
            user = create_user(session, name, is_admin=admin)
            typer.echo(f"created {'admin ' if user.is_admin else ''}user {user.name} ({user.id})")
    finally:
        database.dispose()
    return 0


def tokens_create(user: str, label: str, database_url: str | None) -> int:
    from assay.store.users import create_token

    database = _database(database_url)
    try:
        with database.session() as session:
            token = create_token(session, user, label)
    finally:
        database.dispose()
    typer.echo(f"token {token.id} for {token.user_name}; it is shown once, on the next line: keep it secret")
    typer.echo(token.secret)
    return 0


def tokens_revoke(token_or_id: str, database_url: str | None) -> int:
    from assay.store.users import revoke_token

    database = _database(database_url)
    try:
        with database.session() as session:
            token = revoke_token(session, token_or_id)
            typer.echo(f"revoked token {token.id} (servers of this database stop accepting it within a second)")
    finally:
        database.dispose()
    return 0


def tokens_list(user: str | None, database_url: str | None) -> int:
    from assay.store.users import list_tokens

    database = _database(database_url)
    try:
        with database.session() as session:
            for token, owner in list_tokens(session, user):
                state = "revoked" if token.revoked_at is not None else "active"
                typer.echo(f"{token.id}  {owner}  {token.prefix}…  {state}  {token.name}")
    finally:
        database.dispose()
    return 0
