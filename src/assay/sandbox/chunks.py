"""How both sandboxes cut a batch into chunks: one chunk per process (Python) or per worker
request (Node.js), enough chunks to keep every worker busy, none past the caps."""

from __future__ import annotations

import math
from typing import TypeVar

CHUNK_SAMPLES = 256
"""Samples one chunk takes at most: one process or one request for them all."""
CHUNK_BYTES = 4 << 20
"""Bytes of JSON arguments one chunk takes at most (one sample larger than this goes alone)."""

Text = TypeVar("Text", str, bytes)


def cut(items: list[tuple[int, Text]], workers: int) -> list[list[tuple[int, Text]]]:
    """``items`` (a sample's position and its arguments as JSON) in order, cut into chunks of
    about ``len(items) / workers`` samples, at most ``CHUNK_SAMPLES`` and ``CHUNK_BYTES`` each."""
    per = min(CHUNK_SAMPLES, max(1, math.ceil(len(items) / max(1, workers))))
    out: list[list[tuple[int, Text]]] = []
    current: list[tuple[int, Text]] = []
    size = 0
    for item in items:
        if current and (len(current) >= per or size + len(item[1]) > CHUNK_BYTES):
            out.append(current)
            current, size = [], 0
        current.append(item)
        size += len(item[1])
    if current:
        out.append(current)
    return out
