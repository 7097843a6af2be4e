"""Opening files a user named: only regular files, never a FIFO, a device or a directory.

Opening a FIFO blocks until a writer appears and ``/dev/zero`` never ends, so a path is
opened without blocking and checked on the open descriptor (no gap between check and use).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from assay.core.errors import AssayError, SpecError
from assay.core.untrusted import clean_json


def open_regular(path: Path, *, what: str = "file") -> BinaryIO:
    """Open ``path`` for binary reading; SpecError unless it is a readable regular file."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        raise SpecError(f"{what} not found: {path}") from None
    except IsADirectoryError:
        raise SpecError(f"{what} {path} is a directory, not a file") from None
    except OSError as exc:
        raise SpecError(f"cannot open {what} {path}: {exc.strerror}") from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise SpecError(f"{what} {path} is {_kind(mode)}, not a regular file")
        os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: Path, *, limit: int, what: str = "file") -> bytes:
    """The bytes of a regular file of at most ``limit`` bytes; SpecError otherwise."""
    with open_regular(path, what=what) as fh:
        try:
            data = fh.read(limit + 1)
        except OSError as exc:
            raise SpecError(f"cannot read {what} {path}: {exc.strerror}") from None
    if len(data) > limit:
        raise SpecError(f"{what} {path} is larger than {limit // (1024 * 1024)} MiB")
    return data


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def check_outputs(outputs: dict[str, Path | None], inputs: list[Path]) -> None:
    """Refuse output paths that are directories, that would overwrite an input (the suite
    file, the dataset) or that two options share. ``outputs`` maps option names to paths."""
    given = {opt: p for opt, p in outputs.items() if p is not None}
    seen: dict[Path, str] = {}
    for opt, path in given.items():
        if path.is_dir():
            raise SpecError(f"{opt} {path} is a directory; name a file to write")
        resolved = path.resolve()
        for src in inputs:
            if resolved == src.resolve() or (path.exists() and src.exists() and os.path.samefile(path, src)):
                raise SpecError(f"{opt} {path} would overwrite an input of this run ({src}); name another file")
        if resolved in seen and _is_regular_or_new(path):
            raise SpecError(f"{opt} and {seen[resolved]} both write {path}; give each its own file")
        seen[resolved] = opt


def _is_regular_or_new(path: Path) -> bool:
    try:
        return stat.S_ISREG(path.stat().st_mode)
    except FileNotFoundError:
        return True


def write_output(path: Path, data: bytes | Iterable[bytes]) -> None:
    """Write a whole report file, given whole or in parts. A regular file is replaced atomically
    (a crash never leaves half a report); a device such as /dev/null or /dev/stdout is written
    in place."""
    parts = [data] if isinstance(data, bytes) else data
    try:
        if not _is_regular_or_new(path):
            with path.open("wb") as fh:
                fh.writelines(parts)
            return
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        try:
            with tmp.open("wb") as fh:
                fh.writelines(parts)
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
    except OSError as exc:
        raise AssayError(f"cannot write {path}: {exc.strerror or exc}") from None


def json_bytes(doc: Any) -> bytes:
    """Indented JSON of ``doc``; values JSON cannot hold are normalised (core.untrusted)."""
    try:
        return orjson.dumps(doc, option=orjson.OPT_INDENT_2)
    except (orjson.JSONEncodeError, TypeError):
        return orjson.dumps(clean_json(doc), option=orjson.OPT_INDENT_2)
