"""The server's logging: uvicorn's text lines (the default), or one JSON object per line
(``assay serve --log-format json``) for a log collector.

A JSON line has ``time`` (ISO 8601, UTC), ``level``, ``logger`` and ``message``, the
``error_id`` of a failure (``server.failures``) when there is one, and ``exception`` with
the traceback when one was logged. Access lines carry ``client``, ``request`` and ``status``.
"""

from __future__ import annotations

import logging
from datetime import UTC, datetime
from typing import Any

import orjson

LOG_FORMATS = ("text", "json")


class JsonFormatter(logging.Formatter):
    """A log record as one line of JSON."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat().replace("+00:00", "Z"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        error_id = getattr(record, "error_id", None)
        if error_id is not None:
            entry["error_id"] = error_id
        if record.name == "uvicorn.access" and isinstance(record.args, tuple) and len(record.args) == 5:
            client, method, path, version, status = record.args
            entry.update(client=client, request=f"{method} {path} HTTP/{version}", status=status)
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return orjson.dumps(entry, default=str).decode()


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
        "loggers": {
            "uvicorn": {"handlers": ["json"], "level": level, "propagate": False},
            "uvicorn.error": {"level": level},
            "uvicorn.access": {"handlers": ["json"], "level": level, "propagate": False},
            "assay": {"handlers": ["json"], "level": level, "propagate": False},
        },
    }
