"""OS confinement for untrusted code: rlimits, Landlock, uid drop, seccomp, network namespace.

The layers are applied to a process that is about to run untrusted work (a child forked by the
Python zygote, or a Node worker from ``subprocess``'s ``preexec_fn``), in this order:
no-new-privs, rlimits, Landlock, uid drop, parent-death signal, seccomp. Seccomp goes last
because it denies syscalls the earlier steps may need; the parent-death signal follows the
uid drop because changing credentials clears it.

``apply_in_child`` does no imports and no heavy Python work: the seccomp program and the
Landlock ruleset description are built once in the parent (``prepare``) and merely installed
in the child, which keeps it safe in a ``preexec_fn`` of a threaded parent.
"""

from __future__ import annotations

import ctypes
import errno
import os
import resource
from dataclasses import dataclass, field
from functools import lru_cache

from assay.sandbox import _landlock, _seccomp

REQUIRED_LAYERS = ("netns", "seccomp", "landlock", "rlimits")
"""Layers without which untrusted code is refused unless ``ASSAY_SANDBOX_ALLOW_WEAK=1``."""

_PR_SET_PDEATHSIG = 1
_PR_SET_NO_NEW_PRIVS = 38
_CLONE_NEWUSER = 0x10000000
_CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL(None, use_errno=True)


class ConfinementError(RuntimeError):
    """A required confinement layer could not be applied."""


@dataclass(frozen=True)
class Confinement:
    """What the confined process may do. The defaults suit one Python evaluation.

    ``skip`` names layers not to apply (``"landlock"``, ``"seccomp"``, ``"uid"``); the pool
    uses it only in the operator's explicit weak mode. ``parent_death_signal`` is delivered
    when the *thread* that forked the process exits: set it only when that thread lives as
    long as the child should (the single-threaded zygote), never from a worker thread.
    """

    memory_bytes: int | None = 128 * 2**20  # RLIMIT_AS; None = not set (Node sets heap limits)
    cpu_seconds: int | None = None  # RLIMIT_CPU
    nofile: int = 64
    block_exec: bool = True  # seccomp denies execve/execveat (the Node worker needs False)
    block_threads: bool = False  # Node needs threads
    read_paths: tuple[str, ...] = ()  # Landlock read-only (plus execute) access
    drop_to_uid: int | None = 65534  # applied only when running as root
    block_sockets: bool = True  # socket/connect/bind/listen/accept; socketpair(AF_UNIX) stays
    block_signals: bool = True  # kill, tkill, tgkill, sigqueue, pidfd_send_signal
    file_size_bytes: int = 0  # RLIMIT_FSIZE: no regular file may be written
    parent_death_signal: int | None = None
    skip: frozenset[str] = field(default_factory=frozenset)


@dataclass(frozen=True)
class _Prepared:
    seccomp: _seccomp.FilterProgram | None
    landlock_attr: bytes | None


@lru_cache(maxsize=32)
def prepare(c: Confinement) -> _Prepared:
    """Build what ``apply_in_child`` installs. Call it in the parent before forking (cached)."""
    program = None
    if "seccomp" not in c.skip and _seccomp.supported():
        program = _seccomp.FilterProgram(_seccomp.build_filter(
            block_exec=c.block_exec, block_threads=c.block_threads,
            block_sockets=c.block_sockets, block_signals=c.block_signals))
    abi = _landlock.abi_version() if "landlock" not in c.skip else 0
    return _Prepared(program, _landlock.ruleset_attr(abi) if abi else None)


def apply_in_child(c: Confinement) -> None:
    """Apply every layer of ``c`` to the calling process; raise ``ConfinementError`` if one fails.

    Call it in a freshly forked, single-threaded child (or as ``preexec_fn``). With
    ``block_exec=False`` a following ``execve`` still works, and every layer stays in force
    across it.
    """
    prep = prepare(c)
    if _libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise ConfinementError(f"no_new_privs: {os.strerror(ctypes.get_errno())}")
    if "landlock" not in c.skip:
        if prep.landlock_attr is None:
            raise ConfinementError("landlock: not available on this kernel")
        try:
            _landlock.restrict_self(prep.landlock_attr, c.read_paths)
        except OSError as exc:
            raise ConfinementError(str(exc)) from None
    # After landlock, which opens its ruleset and each path: a busy parent (a server with many
    # connections) may still hold more descriptors than ``nofile`` until exec closes them, and
    # under the lower limit no new one could be opened.
    _set_rlimits(c)
    if "uid" not in c.skip and c.drop_to_uid is not None and os.geteuid() == 0:
        try:
            os.setgroups([])
            os.setresgid(c.drop_to_uid, c.drop_to_uid, c.drop_to_uid)
            os.setresuid(c.drop_to_uid, c.drop_to_uid, c.drop_to_uid)
        except OSError as exc:
            raise ConfinementError(f"uid drop to {c.drop_to_uid}: {exc.strerror}") from None
    if c.parent_death_signal is not None:
        _libc.prctl(_PR_SET_PDEATHSIG, int(c.parent_death_signal), 0, 0, 0)
    if "seccomp" not in c.skip:
        if prep.seccomp is None:
            raise ConfinementError("seccomp: unsupported architecture (filter is x86-64 only)")
        try:
            prep.seccomp.install()
        except OSError as exc:
            raise ConfinementError(str(exc)) from None


def _set_rlimits(c: Confinement) -> None:
    limits = [(resource.RLIMIT_NOFILE, c.nofile), (resource.RLIMIT_FSIZE, c.file_size_bytes),
              (resource.RLIMIT_CORE, 0)]
    if c.memory_bytes is not None:
        limits.append((resource.RLIMIT_AS, c.memory_bytes))
    if c.cpu_seconds is not None:
        # The soft limit sends SIGXCPU; one more second of grace, then the kernel's SIGKILL.
        resource.setrlimit(resource.RLIMIT_CPU, (c.cpu_seconds, c.cpu_seconds + 1))
    for which, value in limits:
        resource.setrlimit(which, (value, value))


def enter_network_namespace() -> bool:
    """Move the calling process into a new, empty network namespace (only a down loopback).

    As root this is a plain ``unshare(CLONE_NEWNET)``; otherwise a user namespace mapping the
    caller's own ids is created first. Returns False when neither is permitted.
    """
    if _libc.unshare(_CLONE_NEWNET) == 0:
        return True
    if os.geteuid() == 0 or ctypes.get_errno() != errno.EPERM:
        return False
    uid, gid = os.geteuid(), os.getegid()
    if _libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNET) != 0:
        return False
    try:
        for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
            with open(f"/proc/self/{name}", "w") as fh:
                fh.write(text)
    except OSError:
        return False
    return True


def probe_layers() -> dict[str, dict]:
    """Which layers this machine offers, each as ``{available: bool, detail: str}``.

    The layers are tried for real in a throwaway child process, so the answer holds for the
    kernel, the security modules and the privileges actually in force.
    """
    from assay.sandbox._probe import probe

    return probe()
