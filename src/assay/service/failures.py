"""What a user may read about a failure, and what only the log holds.

Every user who can see a run can read its ``error``, and an API answer goes to whoever
asked: neither may carry SQL, parameters, paths or a traceback. ``public_failure`` logs the
full exception under a fresh error id and returns a short reason that says what to do, with
that id, which the operator finds in the server log (``error_id`` is a field of each JSON log
line, see ``server.logs``).
"""

from __future__ import annotations

import logging
import uuid

from sqlalchemy.exc import DataError, DBAPIError, OperationalError

from assay.core.errors import SpecError
from assay.core.messages import Phrase

MAX_REASON = 500
WITH_ID = Phrase("failure.with_id", "{reason} (error id {id})")
DATA = Phrase("failure.data", "a value did not fit the database; check the dataset's rows, and if they look right, "
                              "give the operator the error id")
UNREACHABLE = Phrase("failure.database", "the database could not be reached or was busy; start the run again")
REFUSED = Phrase("failure.refused", "the database refused a change; start the run again, and if it fails again "
                                    "give the operator the error id")
MEMORY = Phrase("failure.memory", "the server ran out of memory; try a smaller dataset or ask the operator")
INTERNAL = Phrase("failure.internal", "an internal error stopped this; give the operator the error id")


def new_error_id() -> str:
    """A short id, unique enough to find one failure in a log."""
    return uuid.uuid4().hex[:12]


def public_failure(exc: BaseException, log: logging.Logger, what: str) -> tuple[str, str]:
    """Log ``exc`` in full under a new error id and return ``(reason, error id)``; ``what``
    says in the log what failed (``run 1234``)."""
    error_id = new_error_id()
    log.error("%s failed [error_id=%s]", what, error_id, exc_info=exc, extra={"error_id": error_id})
    return WITH_ID(reason=_reason(exc), id=error_id), error_id


def failure_kind(exc: BaseException) -> str:
    """A failure's kind, for a metric label: ``spec``, ``data``, ``database``,
    ``database_refused``, ``memory`` or ``internal`` (the same split as the reason a user reads)."""
    if isinstance(exc, SpecError):
        return "spec"
    if isinstance(exc, DataError):
        return "data"
    if isinstance(exc, OperationalError):
        return "database"
    if isinstance(exc, DBAPIError):
        return "database_refused"
    if isinstance(exc, MemoryError):
        return "memory"
    return "internal"


def _reason(exc: BaseException) -> str:
    if isinstance(exc, SpecError):  # written for the person who gave the input
        message = str(exc)
        return message if len(message) <= MAX_REASON else message[:MAX_REASON] + "..."
    if isinstance(exc, DataError):
        return DATA()
    if isinstance(exc, OperationalError):
        return UNREACHABLE()
    if isinstance(exc, DBAPIError):
        return REFUSED()
    if isinstance(exc, MemoryError):
        return MEMORY()
    return INTERNAL()
