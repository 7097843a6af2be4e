"""How both sandboxes spread a batch: each sample's arguments encoded, cut into chunks (one per
process in Python, one per worker request in Node.js), enough to keep every worker busy and
none past the caps, run at once, and the outcomes put back in order."""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import orjson

from assay.core.interfaces import CodeOutcome
from assay.core.result import ErrorCode

CHUNK_SAMPLES = 256
"""Samples one chunk takes at most: one process or one request for them all."""
CHUNK_BYTES = 4 << 20
"""Bytes of JSON arguments one chunk takes at most (one sample larger than this goes alone)."""

Text = TypeVar("Text", str, bytes)


def encode_args(args: Sequence[Any]) -> bytes:
    """One sample's arguments as one line of JSON, the same for both languages.

    JSON has no NaN or infinity: they arrive as ``null``, as ``JSON.stringify`` and pandas write
    them (a missing value in a data frame is NaN). Integers beyond 64 bits and lone surrogates,
    which orjson refuses, go through the standard encoder (exact digits, ``\\udc00`` escapes).
    Raises ``TypeError`` for a value that is not JSON data (a set, an object).
    """
    try:
        return orjson.dumps(list(args))
    except TypeError:
        return json.dumps(_finite(list(args)), allow_nan=False).encode()


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


def refused(count: int, limits: dict[str, Any], message: str) -> list[CodeOutcome]:
    """``count`` samples' ``invalid_config`` outcomes saying ``message``, each with its own copy
    of ``limits``."""
    return [CodeOutcome(error=ErrorCode.INVALID_CONFIG, limits=dict(limits), message=message) for _ in range(count)]


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


def spread(args: Sequence[Any], encode: Callable[[Any], Text], limits: dict[str, Any], workers: int,
           run: Callable[[list[tuple[int, Text]]], list[CodeOutcome]],
           threads: Callable[[], ThreadPoolExecutor]) -> list[CodeOutcome]:
    """One outcome per entry of ``args``, in order. Each sample's arguments go through ``encode``
    (one it cannot encode is that sample's ``invalid_config``, with ``limits``); the rest are
    ``cut`` and each chunk is ``run`` (one outcome per sample), at most ``workers`` chunks at once
    (lanes on ``threads()`` when there are several chunks, each lane taking the next chunk when
    it is free). A pool closed meanwhile (``RuntimeError``) has its chunks run here, where they
    answer ``unavailable``."""
    outcomes: list[CodeOutcome | None] = [None] * len(args)
    items: list[tuple[int, Text]] = []
    for i, sample in enumerate(args):
        try:
            items.append((i, encode(sample)))
        except (TypeError, ValueError) as exc:
            outcomes[i] = refused(1, limits, f"the arguments are not JSON data: {exc}")[0]
    parts = cut(items, workers)
    for part, got in zip(parts, _in_lanes(parts, max(1, workers), run, threads)):
        for (i, _encoded), outcome in zip(part, got):
            outcomes[i] = outcome
    return outcomes  # type: ignore[return-value]  # every sample has its outcome


def _in_lanes(parts: list[list[tuple[int, Text]]], lanes: int,
              run: Callable[[list[tuple[int, Text]]], list[CodeOutcome]],
              threads: Callable[[], ThreadPoolExecutor]) -> list[list[CodeOutcome]]:
    """``run`` of each part, in order, with at most ``lanes`` parts running at once: the cap holds
    even when the byte or sample limits cut more chunks than lanes."""
    done: list[list[CodeOutcome]] = [[] for _ in parts]
    taken = iter(range(len(parts)))
    lock = threading.Lock()

    def lane() -> None:
        while True:
            with lock:
                i = next(taken, None)
            if i is None:
                return
            done[i] = run(parts[i])

    futures = []
    if len(parts) > 1:
        try:
            pool = threads()
            for _ in range(min(lanes, len(parts))):
                futures.append(pool.submit(lane))
        except RuntimeError:
            pass
    for future in futures:
        future.result()
    lane()  # the chunks no thread took (a pool closed meanwhile, or a single chunk)
    return done
