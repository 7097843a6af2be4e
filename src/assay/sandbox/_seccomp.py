"""A seccomp-BPF deny-list built by hand (x86-64), so no binding library is needed.

The filter answers EPERM for the syscalls untrusted code has no business making (new
processes, exec, sockets, tracing, signalling other processes, namespaces, mounts, IPC that
outlives the process, kernel interfaces with a history of exploits) and allows the rest. A deny-list keeps CPython and
Node working unchanged; the other layers (Landlock, uid, network namespace) cover what it
lets through. The program is built once, in the parent, and only installed in the child.
"""

from __future__ import annotations

import ctypes
import errno
import platform
import struct

AUDIT_ARCH_X86_64 = 0xC000003E
X32_SYSCALL_BIT = 0x40000000
CLONE_THREAD = 0x00010000
AF_UNIX = 1

RET_KILL_PROCESS = 0x80000000
RET_ERRNO = 0x00050000
RET_ALLOW = 0x7FFF0000

_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE = 0x35
_JSET = 0x45
_RET = 0x06  # BPF_RET | BPF_K
_OFF_NR, _OFF_ARCH, _OFF_ARG0 = 0, 4, 16  # struct seccomp_data; arg0 low word (little-endian)

# x86-64 syscall numbers, grouped by why they are denied.
PROCESS = {"fork": 57, "vfork": 58}
EXEC = {"execve": 59, "execveat": 322}
SOCKETS = {"socket": 41, "connect": 42, "accept": 43, "bind": 49, "listen": 50, "accept4": 288}
SIGNALS = {"kill": 62, "tkill": 200, "tgkill": 234, "rt_sigqueueinfo": 129, "rt_tgsigqueueinfo": 297,
           "pidfd_send_signal": 424}
ALWAYS = {
    "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311, "kcmp": 312,
    "process_madvise": 440, "pidfd_open": 434, "pidfd_getfd": 438,
    "unshare": 272, "setns": 308, "mount": 165, "umount2": 166, "pivot_root": 155, "chroot": 161,
    "open_tree": 428, "move_mount": 429, "fsopen": 430, "fsconfig": 431, "fsmount": 432,
    "fspick": 433, "mount_setattr": 442,
    "bpf": 321, "perf_event_open": 298, "userfaultfd": 323,
    "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427,
    "keyctl": 250, "add_key": 248, "request_key": 249, "memfd_create": 319, "memfd_secret": 447,
    "name_to_handle_at": 303, "open_by_handle_at": 304, "acct": 163, "swapon": 167,
    "swapoff": 168, "reboot": 169, "init_module": 175, "finit_module": 313,
    "delete_module": 176, "kexec_load": 246, "kexec_file_load": 320,
    # System V and POSIX IPC outlive a process: a channel between evaluations, or between tenants.
    "shmget": 29, "shmat": 30, "shmctl": 31, "shmdt": 67, "semget": 64, "semop": 65, "semctl": 66,
    "semtimedop": 220, "msgget": 68, "msgsnd": 69, "msgrcv": 70, "msgctl": 71,
    "mq_open": 240, "mq_unlink": 241, "mq_timedsend": 242, "mq_timedreceive": 243, "mq_notify": 244,
    "mq_getsetattr": 245,
}
NR_CLONE, NR_CLONE3, NR_SOCKETPAIR, NR_PRCTL = 56, 435, 53, 157
PR_SET_PDEATHSIG = 1


def supported() -> bool:
    return platform.machine() == "x86_64"


def _ins(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def build_filter(*, block_exec: bool, block_threads: bool, block_sockets: bool,
                 block_signals: bool) -> bytes:
    """Return the BPF program (packed ``sock_filter`` array) for the chosen deny-list."""
    deny: dict[str, int] = dict(ALWAYS) | PROCESS
    if block_exec:
        deny |= EXEC
    if block_sockets:
        deny |= SOCKETS
    if block_signals:
        deny |= SIGNALS
    eperm = RET_ERRNO | errno.EPERM
    prog = [
        _ins(_LD_W_ABS, _OFF_ARCH),
        _ins(_JEQ, AUDIT_ARCH_X86_64, 1, 0),
        _ins(_RET, RET_KILL_PROCESS),  # another ABI's numbers would bypass the list: kill
        _ins(_LD_W_ABS, _OFF_NR),
        _ins(_JGE, X32_SYSCALL_BIT, 0, 1),
        _ins(_RET, RET_KILL_PROCESS),
        # glibc tries clone3 first for threads and posix_spawn and falls back to clone only
        # on ENOSYS; clone3 passes flags in memory BPF cannot read, so clone is the checkpoint.
        _ins(_JEQ, NR_CLONE3, 0, 1),
        _ins(_RET, RET_ERRNO | errno.ENOSYS),
    ]
    # clone: a new thread (CLONE_THREAD) is allowed unless threads are blocked; a process is not.
    if block_threads:
        prog += [_ins(_JEQ, NR_CLONE, 0, 1), _ins(_RET, eperm)]
    else:
        prog += [
            _ins(_JEQ, NR_CLONE, 0, 4),
            _ins(_LD_W_ABS, _OFF_ARG0),
            _ins(_JSET, CLONE_THREAD, 0, 1),
            _ins(_RET, RET_ALLOW),
            _ins(_RET, eperm),
        ]
    if block_sockets:
        # socketpair(AF_UNIX) only links the process to itself (asyncio's self-pipe needs it).
        prog += [
            _ins(_JEQ, NR_SOCKETPAIR, 0, 4),
            _ins(_LD_W_ABS, _OFF_ARG0),
            _ins(_JEQ, AF_UNIX, 0, 1),
            _ins(_RET, RET_ALLOW),
            _ins(_RET, eperm),
        ]
    # The parent-death signal must stay: it is what ends a child whose zygote is gone.
    prog += [
        _ins(_JEQ, NR_PRCTL, 0, 4),
        _ins(_LD_W_ABS, _OFF_ARG0),
        _ins(_JEQ, PR_SET_PDEATHSIG, 0, 1),
        _ins(_RET, eperm),
        _ins(_RET, RET_ALLOW),
    ]
    for nr in sorted(set(deny.values())):
        prog += [_ins(_JEQ, nr, 0, 1), _ins(_RET, eperm)]
    prog.append(_ins(_RET, RET_ALLOW))
    return b"".join(prog)


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


class FilterProgram:
    """A filter ready to install: the buffers live as long as this object (built in the parent)."""

    def __init__(self, code: bytes) -> None:
        self._buf = ctypes.create_string_buffer(code, len(code))
        self._fprog = _SockFprog(len(code) // 8, ctypes.addressof(self._buf))
        self._libc = ctypes.CDLL(None, use_errno=True)

    def install(self) -> None:
        """Attach the filter to the calling thread; ``PR_SET_NO_NEW_PRIVS`` must be set."""
        pr_set_seccomp, seccomp_mode_filter = 22, 2
        if self._libc.prctl(pr_set_seccomp, seccomp_mode_filter, ctypes.byref(self._fprog), 0, 0) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"seccomp: cannot install filter: {errno.errorcode.get(err, err)}")
