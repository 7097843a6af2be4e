"""Counting code evaluations in flight from inside the sandbox: each evaluation of ``STAMPED``
reports when it began and ended (the host's clock, read in the sandboxed child), and ``peak``
counts how many of those intervals were open at once. Tests assert caps by this count, never
by how long anything took."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

STAMPED = ("import time\n\ndef evaluate(input, output, expected, metadata):\n"
           "    began = time.time()\n    time.sleep(float(metadata.get('pause', 0.05)))\n"
           "    return {'passed': output == expected, 'details': {'began': began, 'ended': time.time()}}\n")
"""A Python evaluator that sleeps ``metadata.pause`` seconds (0.05) and stamps its interval in
``details``: ``began`` and ``ended``, seconds since the epoch."""


def peak(intervals: Iterable[tuple[float, float]]) -> int:
    """The most intervals open at one instant (one that ends when another begins does not overlap it)."""
    edges = sorted((t, step) for began, ended in intervals for t, step in ((began, 1), (ended, -1)))
    most = open_now = 0
    for _t, step in edges:  # at equal times -1 sorts first: an end before a begin
        open_now += step
        most = max(most, open_now)
    return most


def stamps(details: Iterable[dict[str, Any]]) -> list[tuple[float, float]]:
    """The intervals of ``STAMPED`` evaluations, from their results' ``details``."""
    return [(float(d["began"]), float(d["ended"])) for d in details]
