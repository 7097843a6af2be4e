"""The members of an Inspect AI ``.eval`` log, read without Inspect: the file is a zip of JSON
documents (``header.json`` or, while a run is unfinished, ``_journal/start.json``, and one
``samples/<id>_epoch_<n>.json`` per sample), each deflated or, since 2025, zstd-compressed
(zip method 93, which Python's zipfile reads only from 3.14 on). Every member is read with a
bound on its size, so a zip bomb stops at ``MAX_MEMBER`` bytes."""

from __future__ import annotations

import struct
import zipfile
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import orjson

from assay.core.errors import SpecError
from assay.runner.files import open_regular

MAX_MEMBER = 256 * 1024 * 1024
"""The most bytes one member may hold once decompressed (one sample with its events)."""
ZIP_ZSTANDARD = 93
_LOCAL_HEADER = struct.Struct("<4s2B4HL2L2H")
_CHUNK = 1024 * 1024


class EvalZip:
    """An open ``.eval`` file: ``document(name)`` and ``samples()`` give its JSON members."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._fh: IO[bytes] = open_regular(path, what="Inspect log")
        try:
            self._zip = zipfile.ZipFile(self._fh)
        except (zipfile.BadZipFile, OSError, ValueError) as exc:
            self._fh.close()
            raise SpecError(f"not a readable .eval log (a damaged or truncated zip: {exc})", where=str(path)) from None
        self.names = {info.filename: info for info in self._zip.infolist()}

    def __enter__(self) -> EvalZip:
        return self

    def __exit__(self, *_: object) -> None:
        self._zip.close()
        self._fh.close()

    def document(self, name: str) -> Any:
        """The JSON member ``name``, or None when the log has none of that name."""
        info = self.names.get(name)
        return None if info is None else self._json(info)

    def samples(self) -> Iterator[Any]:
        """Each ``samples/*.json`` member, one at a time, in the order the zip holds them."""
        for name, info in self.names.items():
            if name.startswith("samples/") and name.endswith(".json"):
                yield self._json(info)

    def _json(self, info: zipfile.ZipInfo) -> Any:
        where = f"{self.path}: {info.filename}"
        data = self._bytes(info, where)
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise SpecError(f"damaged JSON ({exc})", where=where) from None

    def _bytes(self, info: zipfile.ZipInfo, where: str) -> bytes:
        if info.file_size > MAX_MEMBER:
            raise SpecError(f"member of {info.file_size} bytes, more than the {MAX_MEMBER} assay reads", where=where)
        try:
            if info.compress_type == ZIP_ZSTANDARD:
                data = _zstd(self._raw(info), where)
            else:
                with self._zip.open(info) as member:
                    data = member.read(MAX_MEMBER + 1)
        except (zipfile.BadZipFile, OSError, EOFError, zlib.error) as exc:
            raise SpecError(f"damaged or truncated member ({exc})", where=where) from None
        except NotImplementedError:
            raise SpecError(f"compressed with zip method {info.compress_type}, which assay does not read",
                            where=where) from None
        if len(data) > MAX_MEMBER:
            raise SpecError(f"member larger than the {MAX_MEMBER} bytes assay reads", where=where)
        if zlib.crc32(data) != info.CRC:
            raise SpecError("damaged member (its checksum does not match)", where=where)
        return data

    def _raw(self, info: zipfile.ZipInfo) -> bytes:
        """The compressed bytes of a member, found past its local header."""
        self._fh.seek(info.header_offset)
        head = self._fh.read(_LOCAL_HEADER.size)
        if len(head) < _LOCAL_HEADER.size or head[:4] != b"PK\x03\x04":
            raise zipfile.BadZipFile("no local header where the directory says")
        fields = _LOCAL_HEADER.unpack(head)
        self._fh.seek(fields[-2] + fields[-1], 1)  # past the file name and the extra field
        raw = self._fh.read(info.compress_size)
        if len(raw) < info.compress_size:
            raise EOFError("the member ends early")
        return raw


def _zstd(raw: bytes, where: str) -> bytes:
    try:
        import zstandard
    except ImportError:  # a dependency of assay; only a broken install lacks it
        raise SpecError("this log is zstd-compressed and the zstandard package is missing "
                        "(pip install zstandard)", where=where) from None
    reader = zstandard.ZstdDecompressor().stream_reader(raw, read_across_frames=True)
    parts, size = [], 0
    try:
        while chunk := reader.read(_CHUNK):
            parts.append(chunk)
            size += len(chunk)
            if size > MAX_MEMBER:
                break
    except zstandard.ZstdError as exc:
        raise SpecError(f"damaged zstd data ({exc})", where=where) from None
    return b"".join(parts)
