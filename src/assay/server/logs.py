"""The server's logging: uvicorn's text lines (the default), or one JSON object per line
(``assay serve --log-format json``) for a log collector.

A JSON line has ``time`` (ISO 8601, UTC), ``level``, ``logger`` and ``message``, the
``request_id`` of the request being served when there is one (``REQUEST_ID``, set by
``server.edge`` and answered in ``X-Request-Id``), the ``error_id`` of a failure
(``service.failures``) when there is one, and, when an exception was logged, ``exc_type``,
``exc_message`` and ``exception`` (the traceback). Access lines carry ``client``, ``request``
and ``status``. Under ``json`` every logger writes JSON (the root logger too, and Python's
warnings), so a collector never meets a bare traceback.
"""

from __future__ import annotations

import logging
import secrets
import sys
import threading
from contextvars import ContextVar
from datetime import UTC, datetime
from types import TracebackType
from typing import Any

import orjson

LOG_FORMATS = ("text", "json")

REQUEST_ID: ContextVar[str | None] = ContextVar("assay_request_id", default=None)
"""The id of the request being served (in its task and the threads it starts), for log lines
and error bodies."""


def new_request_id() -> str:
    """A fresh request id: 16 hex digits."""
    return secrets.token_hex(8)


class JsonFormatter(logging.Formatter):
    """A log record as one line of JSON."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat().replace("+00:00", "Z"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        request_id = getattr(record, "request_id", None) or REQUEST_ID.get()
        if request_id is not None:
            entry["request_id"] = request_id
        error_id = getattr(record, "error_id", None)
        if error_id is not None:
            entry["error_id"] = error_id
        if record.name == "uvicorn.access" and isinstance(record.args, tuple) and len(record.args) == 5:
            client, method, path, version, status = record.args
            entry.update(client=client, request=f"{method} {path} HTTP/{version}", status=status)
        if record.exc_info and record.exc_info[1] is not None:
            entry["exc_type"] = type(record.exc_info[1]).__qualname__
            entry["exc_message"] = str(record.exc_info[1])
            entry["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            entry["exception"] = record.exc_text
        if record.stack_info:
            entry["stack"] = record.stack_info
        return orjson.dumps(entry, default=str).decode()


def log_stray_output() -> None:
    """Python's warnings and exceptions no code caught (in a thread or the main one) become log
    records too, instead of text on stderr: under ``json`` a collector gets nothing but JSON."""
    log = logging.getLogger("assay.uncaught")
    logging.captureWarnings(True)

    def in_thread(args: threading.ExceptHookArgs) -> None:
        if args.exc_type is SystemExit:
            return
        name = args.thread.name if args.thread is not None else "?"
        error = args.exc_value if args.exc_value is not None else args.exc_type()
        log.error("uncaught exception in thread %s", name, exc_info=(args.exc_type, error, args.exc_traceback))

    def in_main(exc_type: type[BaseException], value: BaseException, traceback: TracebackType | None) -> None:
        log.critical("uncaught exception", exc_info=(exc_type, value, traceback))

    threading.excepthook = in_thread
    sys.excepthook = in_main


def log_config(log_format: str, level: str) -> dict[str, Any] | None:
    """A ``logging.config.dictConfig`` for uvicorn and assay's loggers in ``log_format``;
    None leaves uvicorn's own (text) configuration."""
    if log_format == "text":
        return None
    if log_format != "json":
        raise ValueError(f"log format {log_format!r}: use one of {', '.join(LOG_FORMATS)}")
    handler = {"class": "logging.StreamHandler", "formatter": "json", "stream": "ext://sys.stderr"}
    level = level.upper()
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {"json": {"()": f"{__name__}.JsonFormatter"}},
        "handlers": {"json": handler},
        "root": {"handlers": ["json"], "level": "WARNING"},
        "loggers": {
            "uvicorn": {"handlers": ["json"], "level": level, "propagate": False},
            "uvicorn.error": {"level": level},
            "uvicorn.access": {"handlers": ["json"], "level": level, "propagate": False},
            "assay": {"handlers": ["json"], "level": level, "propagate": False},
            "assay.serve": {"level": "INFO"},  # what assay serve tells its operator, at every level
        },
    }
