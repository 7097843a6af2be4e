"""Dataset files as text: numbered lines of bounded length, UTF-8 only.

A dataset may be large, so it is read in blocks of whole lines rather than at once; a single
line (or CSV row) longer than ``MAX_LINE_BYTES`` is an error naming it rather than an unbounded
read. UTF-8 is the only encoding: a UTF-8 BOM is dropped, UTF-16 and UTF-32 are named as such.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

from assay.core.errors import SpecError

MAX_LINE_BYTES = 64 * 1024 * 1024
"""Longest line (JSONL) or row (CSV, quoted line breaks included) read; the file may be larger."""

_BOMS = ((b"\xff\xfe\x00\x00", "UTF-32"), (b"\x00\x00\xfe\xff", "UTF-32"),
         (b"\xff\xfe", "UTF-16"), (b"\xfe\xff", "UTF-16"))
_NL = b"\n"
_BLOCK = 1024 * 1024


def blocks(fh: BinaryIO, path: Path) -> Iterator[tuple[int, bytes]]:
    """The file as ``(number of its first line, bytes)`` runs of whole lines, each ending in a
    newline but perhaps the last; a leading UTF-8 BOM is removed. Reading in blocks keeps the
    per-line work in C; a line longer than ``MAX_LINE_BYTES`` is an error naming it."""
    limit = MAX_LINE_BYTES
    size = min(_BLOCK, limit)  # so that a line inside one block is within the limit
    pending: list[bytes] = []  # the start of a line that continues in the next block
    pending_len = 0
    line_no = 1
    block = check_start(read(fh.read, size, path), path)
    while block:
        cut = block.rfind(_NL) + 1
        if pending_len + (block.find(_NL) + 1 or len(block)) > limit:
            raise SpecError(f"line is longer than {size_text(limit)}; each row must fit in {size_text(limit)}",
                            where=f"{path}:{line_no}")
        if cut == 0:
            pending.append(block)
            pending_len += len(block)
        else:
            chunk = b"".join((*pending, block[:cut])) if pending else block[:cut]
            yield line_no, chunk
            line_no += chunk.count(_NL)
            pending = [block[cut:]] if cut < len(block) else []
            pending_len = len(block) - cut
        block = read(fh.read, size, path)
    if pending:
        yield line_no, b"".join(pending)


def lines(fh: BinaryIO, path: Path) -> Iterator[tuple[int, bytes]]:
    """The numbered lines of ``fh``, each with its newline (see ``blocks``)."""
    for line_no, chunk in blocks(fh, path):
        parts = chunk.split(_NL)
        last = parts.pop()
        for i, part in enumerate(parts, line_no):
            yield i, part + _NL
        if last:
            yield line_no + len(parts), last


def read(method: Callable[[int], bytes], arg: int, path: Path) -> bytes:
    """``method(arg)``, a read of the dataset; an I/O error becomes a SpecError."""
    try:
        return method(arg)
    except OSError as exc:
        raise SpecError(f"cannot read dataset {path}: {exc.strerror}") from None


def check_start(head: bytes, path: Path) -> bytes:
    """``head`` (the file's first line or bytes) without a UTF-8 BOM; SpecError for UTF-16/32 text."""
    if head.startswith(b"\xef\xbb\xbf"):
        return head[3:]
    for bom, name in _BOMS:
        if head.startswith(bom):
            raise SpecError(f"the file is {name} text (it starts with a {name} byte-order mark); "
                            "save it as UTF-8", where=f"{path}:1")
    start = head[:4096]
    nul = start.find(b"\x00")
    if nul >= 0:
        if start.count(b"\x00") * 4 >= len(start):
            # UTF-16 without a BOM: every other byte of ASCII text is NUL
            raise SpecError("the file has NUL bytes between its characters: is it UTF-16 text? save it as UTF-8",
                            where=f"{path}:1")
        line = line_of(start, nul)
        column = nul - (start.rfind(_NL, 0, nul) + 1) + 1
        raise SpecError(f"a NUL byte (0x00) at column {column}: text holds none; remove it (inside a JSON "
                        "string, write \\u0000)", where=f"{path}:{line}")
    return head


def utf8(raw: bytes, where: str) -> str:
    """``raw`` decoded; SpecError naming the first byte that is not UTF-8 and its column."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        column = len(raw[:exc.start].decode("utf-8")) + 1
        raise SpecError(f"not UTF-8 text (byte 0x{raw[exc.start]:02x} at column {column}); "
                        "save the file as UTF-8", where=where) from None


def line_of(text: bytes | str, offset: int) -> int:
    """The 1-based line of ``offset`` in ``text``."""
    if isinstance(text, bytes):
        return text.count(_NL, 0, offset) + 1
    return text.count("\n", 0, offset) + 1


def size_text(n: int) -> str:
    return f"{n // 2**20} MiB" if n % 2**20 == 0 else f"{n:,} bytes"
