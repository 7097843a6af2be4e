"""Turn a worker's response into a ``CodeOutcome`` (a call) or a problem with the code (a check).

The returned value arrives as the JSON text the isolate wrote and is parsed and normalised by
``sandbox.results`` exactly as a Python evaluator's is; every text field is capped, whatever
the worker claims to have cut already.
"""

from __future__ import annotations

import re
from typing import Any

from assay.core import syntax_words
from assay.core.interfaces import CodeOutcome
from assay.core.messages import Phrase, Said
from assay.core.result import ErrorCode
from assay.core.untrusted import cap_text
from assay.sandbox.activity import activity
from assay.sandbox.node.handle import Worker
from assay.sandbox.results import (
    HOST_MAX_PRINTED_CHARS,
    HOST_MAX_TRACEBACK_CHARS,
    as_phrased,
    cap_message,
    left_running,
    load_json,
    refusal,
)

_STATUS = {"timeout": ErrorCode.TIMEOUT, "memory": ErrorCode.MEMORY, "invalid_output": ErrorCode.INVALID_OUTPUT,
           "error": ErrorCode.RUNTIME_ERROR, "syntax": ErrorCode.RUNTIME_ERROR}
_SYNTAX_AT = re.compile(r"^(.*?)\s*\[evaluator\.js:(\d+):(\d+)\]$", re.S)
# What the worker says of an evaluation it stopped (evaluation.js names these phrases).
Phrase("sandbox.node_timer", "the evaluation was still waiting on a timer (due {due} ms later) when its {ms} ms "
                             "ran out")
Phrase("sandbox.node_between_steps", "the evaluation was between steps when its {ms} ms ran out")
Phrase("sandbox.node_watchdog", "the evaluation was stopped by the watchdog {ms} ms after it started")
Phrase("sandbox.node_running", "the evaluation was still running (its code had the isolate) when its {ms} ms ran out")
Phrase("sandbox.node_memory", "the evaluation exceeded the {mb} MB memory limit")
OVERRAN = Phrase("sandbox.node_overran", "the evaluation ran past {ms} ms with no answer from its worker "
                                         "(worker killed)")
OVERRAN_DOING = Phrase("sandbox.node_overran_doing", "the evaluation ran past {ms} ms with no answer from its "
                                                     "worker, which was still {doing} (worker killed)")
SYNTAX_AT = Phrase("sandbox.syntax_at", "SyntaxError at line {line}, column {column}: {message}")


def classify(response: dict[str, Any], elapsed_ms: float, limits: dict[str, Any]) -> CodeOutcome:
    """The outcome of one call: the value normalised, or the error with its message capped."""
    out = CodeOutcome(duration_ms=elapsed_ms, limits=limits,
                      output=_text(response.get("output"), HOST_MAX_PRINTED_CHARS))
    timers = response.get("timers")
    if isinstance(timers, int) and not isinstance(timers, bool) and timers > 0:
        note = left_running(timers, "timer")
        out.output = f"{out.output.rstrip(chr(10))}\n{note}" if out.output else note
    status = response.get("status")
    if status == "ok":
        try:
            out.value = load_json(str(response.get("json")).encode())
        except ValueError as exc:
            out.error, out.message = ErrorCode.INVALID_OUTPUT, refusal(exc)
        return out
    out.error = _STATUS.get(str(status), ErrorCode.RUNTIME_ERROR)
    message = response.get("message")
    out.message = as_phrased(response.get("phrase"), cap_message(message)) if isinstance(message, str) and message \
        else str(status)
    out.traceback = _text(response.get("stack"), HOST_MAX_TRACEBACK_CHARS)
    return out


def overran(timeout_ms: float, worker: Worker) -> Said:
    """The reason of a sample whose worker did not answer by the host's deadline (its own
    timeout plus the pool's margin, so the time has passed): what the worker was doing."""
    doing = activity(worker.proc.pid) if worker.proc is not None else None
    return OVERRAN_DOING(ms=int(timeout_ms), doing=doing) if doing else OVERRAN(ms=int(timeout_ms))


def check_problem(response: dict[str, Any]) -> str | None:
    """What a ``check`` response says is wrong with the code (a syntax error with its line), or None."""
    status = response.get("status")
    if status == "ok":
        return None
    message = str(response.get("message") or status)
    if status == "syntax":
        m = _SYNTAX_AT.search(message)
        return SYNTAX_AT(line=m[2], column=m[3], message=syntax_words.said(m[1])) if m else f"SyntaxError: {message}"
    return message


def _text(value: Any, limit: int) -> str | None:
    """A text field of a response, capped; None when absent or not text."""
    return cap_text(value, limit) if isinstance(value, str) and value else None
