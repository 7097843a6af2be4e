"""Pure helpers shared by the ``program`` and ``script`` graders: durations and the child's
environment. The process itself runs through ``Resources.process_runner``."""

from __future__ import annotations

import os
import re

NO_PROCESS_RUNNER = ("no process runner is configured: build graders with "
                     "assay.runner.resources.default_resources() or pass Resources(process_runner=...)")

# Environment variables a scrubbed environment keeps from the parent.
SCRUBBED_KEEP = ("PATH", "HOME", "LANG", "TMPDIR")


def build_env(extra: dict[str, str], *, scrub: bool, base: dict[str, str] | None = None) -> dict[str, str]:
    """The child's environment: the parent's (or only PATH/HOME/LANG/TMPDIR when
    ``scrub``), with ``extra`` merged over it."""
    parent = dict(os.environ) if base is None else dict(base)
    env = {k: parent[k] for k in SCRUBBED_KEEP if k in parent} if scrub else parent
    env.update(extra)
    return env


_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(value: object) -> float:
    """A duration in seconds from ``500ms``, ``60s``, ``2m``, ``1h``, ``1m30s`` or a bare
    number of seconds. Raises ValueError naming the accepted forms."""
    if isinstance(value, bool):
        raise ValueError("a duration must be a number of seconds or text such as 60s, 2m, 500ms")
    if isinstance(value, (int, float)):
        seconds = float(value)
    elif isinstance(value, str):
        text = value.strip()
        parts = re.findall(r"(\d+(?:\.\d+)?)(ms|s|m|h)", text)
        if not parts or "".join(n + u for n, u in parts) != text.replace(" ", ""):
            raise ValueError(f"invalid duration {value!r}: use a number with a unit, e.g. 60s, 2m, 500ms")
        seconds = sum(float(n) * _UNITS[u] for n, u in parts)
    else:
        raise ValueError("a duration must be a number of seconds or text such as 60s, 2m, 500ms")
    if not seconds > 0:
        raise ValueError("a duration must be greater than zero")
    return seconds


def format_duration(seconds: float) -> str:
    if seconds < 1:
        return f"{seconds * 1000:g}ms"
    if seconds >= 60 and seconds % 60 == 0:
        return f"{seconds / 60:g}m"
    return f"{seconds:g}s"
