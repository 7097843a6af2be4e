"""One console for every command: wide enough for the tables when output is piped (CI logs)."""

from __future__ import annotations

import sys

from rich.console import Console


def make_console() -> Console:
    return Console(highlight=False, width=None if sys.stdout.isatty() else 120)
