"""The text encoding of a CSV or TSV file, told from its first bytes, and the file read as UTF-8.

Excel saves "CSV" in the machine's code page unless told otherwise: GBK on Chinese Windows
(GB18030 is its superset, and the standard), and "Unicode text" is UTF-16 with a BOM. A file is
read as UTF-8 when its first ``SAMPLE_BYTES`` are UTF-8 (with or without a BOM), as UTF-16 or
UTF-32 when it starts with their BOM, and otherwise in the encoding charset-normalizer finds
for those bytes, when it is one of ``LEGACY`` (anything else is more likely a wrong guess than a
file someone saved). The rest of the file is decoded as it streams in: a byte that does not
belong to the encoding is an error naming its line, never a garbled row.
"""

from __future__ import annotations

import codecs
from pathlib import Path
from typing import BinaryIO, cast

from assay.core.errors import SpecError
from assay.core.messages import Phrase

SAMPLE_BYTES = 64 * 1024
"""What the encoding is told from: enough for many rows of Chinese text, read before any row."""

LEGACY = {"gb18030": "GB18030", "gbk": "GB18030", "gb2312": "GB18030", "hz": "GB18030",
          "big5": "Big5", "big5hkscs": "Big5", "cp950": "Big5",
          "shift_jis": "Shift_JIS", "cp932": "Shift_JIS", "euc_jp": "EUC-JP", "euc_kr": "EUC-KR", "cp949": "EUC-KR"}
"""charset-normalizer's names of the East Asian code pages Excel saves in, to the codec read
(GBK and GB2312 files are read as GB18030, which holds both)."""

_BOMS = ((b"\xff\xfe\x00\x00", "UTF-32"), (b"\x00\x00\xfe\xff", "UTF-32"), (b"\xff\xfe", "UTF-16"),
         (b"\xfe\xff", "UTF-16"))
_CODEC = {"UTF-8": "utf-8", "UTF-16": "utf-16", "UTF-32": "utf-32", "GB18030": "gb18030", "Big5": "big5hkscs",
          "Shift_JIS": "cp932", "EUC-JP": "euc_jp", "EUC-KR": "cp949"}

UNKNOWN = Phrase("dataset.unknown_encoding",
                 "{file}: not UTF-8 text, nor GBK/GB18030, Big5 or UTF-16 (byte 0x{byte} on line {line}); "
                 "in Excel, save it as \"CSV UTF-8 (comma delimited)\" and upload it again")
NOT_THIS = Phrase("dataset.bad_byte",
                  "{file}: line {line} is not {encoding} text like the lines before it (byte 0x{byte}); "
                  "in Excel, save it as \"CSV UTF-8 (comma delimited)\" and upload it again")


def as_utf8(fh: BinaryIO, path: Path) -> tuple[BinaryIO, str]:  # (its readers only ever call read(n))
    """``fh`` read as UTF-8 bytes (a BOM kept as UTF-8's), and the name of the encoding the file
    was found in (``UTF-8``, ``GB18030``, ``UTF-16``, ...). SpecError when the first bytes are in
    no encoding told apart with confidence."""
    head = fh.read(SAMPLE_BYTES)
    for bom, name in _BOMS:
        if head.startswith(bom):
            return cast(BinaryIO, _Transcoded(fh, head, name, path)), name
    decoder = codecs.getincrementaldecoder("utf-8")()
    try:
        decoder.decode(head, final=len(head) < SAMPLE_BYTES)  # a character cut at the sample's end is fine
    except UnicodeDecodeError as exc:
        guessed = _guess(head)
        if guessed is None:
            raise SpecError(UNKNOWN(file=str(path), byte=f"{head[exc.start]:02x}",
                                    line=head.count(b"\n", 0, exc.start) + 1)) from None
        return cast(BinaryIO, _Transcoded(fh, head, guessed, path)), guessed
    return cast(BinaryIO, _Prefixed(fh, head)), "UTF-8"


def _guess(head: bytes) -> str | None:
    """The encoding of ``LEGACY`` whose reading of ``head`` looks least like noise; GB18030 on a
    near tie (a few Chinese words read as well in Big5 or EUC-KR: GBK is what Chinese Excel saves)."""
    from charset_normalizer import from_bytes  # imported when a file is not UTF-8: rare, and it loads tables

    matches = [(m.chaos, LEGACY[m.encoding]) for m in from_bytes(head, cp_isolation=sorted(LEGACY),
                                                                  preemptive_behaviour=False)
               if m.encoding in LEGACY]
    if not matches:
        return None
    best = min(chaos for chaos, _ in matches)
    if any(name == "GB18030" and chaos <= best + NEAR_TIE for chaos, name in matches):
        return "GB18030"
    return min(matches)[1]


NEAR_TIE = 0.05
"""How much more noise (charset-normalizer's "chaos", 0 to 1) GB18030's reading may show and
still be chosen."""


class _Prefixed:
    """``head`` then the rest of ``fh``: the bytes read to tell the encoding, given back."""

    def __init__(self, fh: BinaryIO, head: bytes) -> None:
        self._fh, self._head = fh, head

    def read(self, size: int = -1, /) -> bytes:
        if self._head:
            if size < 0:
                out, self._head = self._head + self._fh.read(), b""
                return out
            out, self._head = self._head[:size], self._head[size:]
            return out
        return self._fh.read(size)


class _Transcoded:
    """``fh``, in ``encoding``, read as UTF-8 bytes; a byte of another encoding is a SpecError
    naming its line (counted in the text decoded so far)."""

    def __init__(self, fh: BinaryIO, head: bytes, encoding: str, path: Path) -> None:
        self._source = _Prefixed(fh, head)
        self._decoder = codecs.getincrementaldecoder(_CODEC[encoding])()
        self._encoding, self._path = encoding, path
        self._out = bytearray()
        self._lines = 1
        self._ended = False

    def read(self, size: int = -1, /) -> bytes:
        while not self._ended and (size < 0 or len(self._out) < size):
            raw = self._source.read(max(size, SAMPLE_BYTES))
            self._ended = not raw
            try:
                text = self._decoder.decode(raw, final=self._ended)
            except UnicodeDecodeError as exc:
                line = self._lines + self._out.count(b"\n") + text_lines(raw[:max(exc.start, 0)], self._encoding)
                raise SpecError(NOT_THIS(file=str(self._path), line=line, encoding=self._encoding,
                                         byte=f"{exc.object[exc.start]:02x}")) from None
            self._out += text.encode("utf-8")
        cut = len(self._out) if size < 0 else size
        out = bytes(self._out[:cut])
        del self._out[:cut]
        self._lines += out.count(b"\n")
        return out


def text_lines(raw: bytes, encoding: str) -> int:
    """The line breaks in ``raw``, bytes of ``encoding`` (its error part ignored)."""
    return raw.decode(_CODEC[encoding], errors="ignore").count("\n")
