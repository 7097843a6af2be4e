"""Pure helpers shared by the ``program`` and ``script`` graders: durations, config text the
OS can take, and the program's printed JSON. The process itself runs through
``Resources.process_runner``, which also owns the environment the child inherits."""

from __future__ import annotations

import json
import math
import re
from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, ValidationError

from assay.core.untrusted import MAX_DEPTH, TooDeep, clean_json
from assay.graders._text import preview

NO_PROCESS_RUNNER = ("no process runner is configured: build graders with "
                     "assay.runner.resources.default_resources() or pass Resources(process_runner=...)")

MAX_TIMEOUT_S = 3600.0
"""The longest ``timeout`` a program or script may be given (one hour)."""
MAX_ARG_BYTES = 128 * 1024 - 1
"""The longest single argument (or environment value) Linux accepts: MAX_ARG_STRLEN less the NUL."""
_SURROGATE = re.compile("[\ud800-\udfff]")


def _os_text(value: str) -> str:
    # The OS takes NUL-terminated bytes: NUL would cut the text, and a lone surrogate has no
    # UTF-8 form; both would otherwise fail only when the program is started.
    if "\0" in value:
        raise ValueError("must not contain a NUL character")
    if surrogate := _SURROGATE.search(value):
        raise ValueError(f"must be valid Unicode text (it holds the lone surrogate U+{ord(surrogate[0]):04X})")
    if len(value.encode("utf-8")) > MAX_ARG_BYTES:
        raise ValueError(f"is longer than {MAX_ARG_BYTES} bytes, the most one argument may take")
    return value


def check_env_names(env: dict[str, str]) -> dict[str, str]:
    """``env`` unchanged when every name can be set; raises ValueError naming the first that cannot."""
    for name in env:
        if not name or "=" in name or "\0" in name or _SURROGATE.search(name):
            raise ValueError(f"{preview(name, 60)!r} is not an environment variable name "
                             "(it must be non-empty, without '=' or NUL)")
    return env


OsText = Annotated[str, AfterValidator(_os_text)]
"""Config text handed to the OS (a program, an argument, a path, an environment value)."""


_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
_FORMS = "a number of seconds or text such as 60s, 2m, 500ms"


def parse_duration(value: object, *, maximum: float = MAX_TIMEOUT_S) -> float:
    """A duration in seconds from ``500ms``, ``60s``, ``2m``, ``1h``, ``1m30s`` or a bare
    number of seconds, greater than zero and at most ``maximum``. Raises ValueError naming
    the accepted forms."""
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise ValueError(f"a duration must be {_FORMS}")
    if isinstance(value, str):
        text = value.strip()
        parts = re.findall(r"(\d+(?:\.\d+)?)(ms|s|m|h)", text)
        if not parts or "".join(n + u for n, u in parts) != text.replace(" ", ""):
            shown = value if len(value) <= 40 else value[:40] + "…"
            raise ValueError(f"invalid duration {shown!r}: use a number with a unit, e.g. 60s, 2m, 500ms")
        seconds = sum(float(n) * _UNITS[u] for n, u in parts)
    else:
        # An int too large for a float is simply too long (float() would raise OverflowError).
        seconds = float(value) if isinstance(value, float) or abs(value) < 2**53 else math.inf * (value > 0 or -1)
    if math.isnan(seconds) or seconds <= 0:
        raise ValueError("a duration must be greater than zero")
    if seconds > maximum:
        raise ValueError(f"a duration may be at most {maximum:g}s"
                         + ("" if math.isinf(seconds) else f" (got {seconds:g}s)"))
    return seconds


def load_output(text: str) -> Any:
    """What a program printed, parsed as JSON and normalised by ``core.untrusted.clean_json``
    (lone surrogates, NaN, big integers made writable). Raises ``TooDeep`` when nested more than
    ``MAX_DEPTH`` levels, ``ValueError`` when it is not JSON."""
    try:
        value = json.loads(text)
    except RecursionError:  # the parser's own limit, far past MAX_DEPTH
        raise TooDeep(f"nested more than {MAX_DEPTH} levels deep") from None
    return clean_json(value)


def schema_problems(exc: ValidationError, limit: int = 10) -> list[str]:
    """``field: message`` for the first ``limit`` problems pydantic found in printed output,
    each short (a field name comes from the output and may be anything)."""
    errors = exc.errors(include_url=False)
    problems = [preview(f"{'.'.join(str(p) for p in e['loc']) or '<root>'}: {e['msg']}", 200)
                for e in errors[:limit]]
    if len(errors) > limit:
        problems.append(f"… and {len(errors) - limit} more")
    return problems


def format_duration(seconds: float) -> str:
    if seconds < 1:
        return f"{seconds * 1000:g}ms"
    if seconds >= 60 and seconds % 60 == 0:
        return f"{seconds / 60:g}m"
    return f"{seconds:g}s"


Duration = Annotated[float, BeforeValidator(parse_duration)]
"""A config's wall-clock limit in seconds: a number of seconds or text such as 500ms, 60s, 2m,
1h; greater than zero and at most ``MAX_TIMEOUT_S``."""
EnvVars = Annotated[dict[str, OsText], AfterValidator(check_env_names)]
"""Extra environment variables: names that can be set, values the OS can take."""
