"""A minimal ctypes binding to Landlock (file system, TCP and scoping), Linux x86-64 / arm64.

The PyPI ``landlock`` package covers file-system rules only; the sandbox also needs the TCP
rules (ABI 4) and signal / abstract-socket scoping (ABI 6), so the three syscalls are called
directly. Everything here is safe to call in a freshly forked child: no imports, only
``struct`` packing of a few bytes and ctypes calls.
"""

from __future__ import annotations

import ctypes
import os
import platform
import struct

_NR = {  # landlock_create_ruleset, landlock_add_rule, landlock_restrict_self
    "x86_64": (444, 445, 446),
    "aarch64": (444, 445, 446),
}.get(platform.machine())

_libc = ctypes.CDLL(None, use_errno=True)
_syscall = _libc.syscall
_syscall.restype = ctypes.c_long

CREATE_RULESET_VERSION = 1
RULE_PATH_BENEATH = 1

FS_EXECUTE = 1 << 0
FS_WRITE_FILE = 1 << 1
FS_READ_FILE = 1 << 2
FS_READ_DIR = 1 << 3
_FS_ABI1 = (1 << 13) - 1  # execute .. make_sym
FS_REFER = 1 << 13  # ABI 2
FS_TRUNCATE = 1 << 14  # ABI 3
FS_IOCTL_DEV = 1 << 15  # ABI 5
NET_BIND_TCP = 1 << 0  # ABI 4
NET_CONNECT_TCP = 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
SCOPE_SIGNAL = 1 << 1

# Rights that make sense on a regular file (Landlock rejects directory rights on files).
_FILE_READ = FS_EXECUTE | FS_READ_FILE
_DIR_READ = FS_EXECUTE | FS_READ_FILE | FS_READ_DIR


class LandlockError(OSError):
    """A Landlock syscall failed."""


def abi_version() -> int:
    """The Landlock ABI the kernel offers, or 0 when Landlock is unavailable."""
    if _NR is None:
        return 0
    version = _syscall(_NR[0], None, ctypes.c_size_t(0), ctypes.c_uint32(CREATE_RULESET_VERSION))
    return int(version) if version > 0 else 0


def handled_masks(abi: int) -> tuple[int, int, int]:
    """(fs, net, scoped) access masks covering everything ``abi`` can restrict."""
    fs = _FS_ABI1
    if abi >= 2:
        fs |= FS_REFER
    if abi >= 3:
        fs |= FS_TRUNCATE
    if abi >= 5:
        fs |= FS_IOCTL_DEV
    net = NET_BIND_TCP | NET_CONNECT_TCP if abi >= 4 else 0
    scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if abi >= 6 else 0
    return fs, net, scoped


def ruleset_attr(abi: int) -> bytes:
    """The packed ``landlock_ruleset_attr`` for ``abi``: its size tells the kernel which fields exist."""
    fs, net, scoped = handled_masks(abi)
    if abi >= 6:
        return struct.pack("=QQQ", fs, net, scoped)
    if abi >= 4:
        return struct.pack("=QQ", fs, net)
    return struct.pack("=Q", fs)


def _fail(what: str) -> LandlockError:
    err = ctypes.get_errno()
    return LandlockError(err, f"landlock {what}: {os.strerror(err)}")


def restrict_self(attr: bytes, read_paths: tuple[str, ...] = ()) -> None:
    """Confine the calling thread (and its future children) to read-only ``read_paths``.

    Everything the ruleset handles and no rule grants is denied: with no paths, no file can
    be opened, no TCP port bound or connected, no signal sent and no abstract Unix socket
    reached outside the domain. ``PR_SET_NO_NEW_PRIVS`` must already be set.
    """
    if _NR is None:
        raise LandlockError(0, f"landlock: unsupported architecture {platform.machine()}")
    ruleset = _syscall(_NR[0], attr, ctypes.c_size_t(len(attr)), ctypes.c_uint32(0))
    if ruleset < 0:
        raise _fail("create_ruleset")
    try:
        for path in read_paths:
            _allow_read(_NR[1], int(ruleset), path)
        if _syscall(_NR[2], ctypes.c_int(ruleset), ctypes.c_uint32(0)) != 0:
            raise _fail("restrict_self")
    finally:
        os.close(ruleset)


def _allow_read(add_rule: int, ruleset: int, path: str) -> None:
    fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    try:
        rights = _DIR_READ if os.path.isdir(path) else _FILE_READ
        rule = struct.pack("=Qi", rights, fd)  # landlock_path_beneath_attr is packed: 12 bytes
        if _syscall(add_rule, ctypes.c_int(ruleset), ctypes.c_int(RULE_PATH_BENEATH), rule, ctypes.c_uint32(0)) != 0:
            raise _fail(f"add_rule {path!r}")
    finally:
        os.close(fd)
