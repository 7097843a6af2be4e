"""The launcher a ``program``/``script`` process runs under on Linux: it becomes a child
subreaper, starts the program, and once the program has exited (or on SIGTERM, SIGHUP,
SIGINT, or its parent's death) kills and reaps every descendant, then exits itself.

Run as ``python -I -S _reaper.py STATUS_FD CGROUP PARENT_PID -- PROGRAM ARG...``, where
CGROUP is a cgroup v2 directory for the program or ``-``. One line is written on STATUS_FD:
``E <errno>`` when the program could not be executed, ``W <wait status>`` when it ended.

Why a separate process: ``prctl(PR_SET_CHILD_SUBREAPER)`` applies only to the caller. As a
subreaper the launcher inherits every orphaned descendant, including those that called
``setsid()`` or double-forked (they escape a process-group kill), so walking /proc from its
own pid finds them all, and it reaps them (some init processes never reap zombies). With a
cgroup the program joins it before exec and ``cgroup.kill`` ends everything in it at once,
even a fork loop; the /proc sweep still runs, for anything that left the cgroup.

Standard library only, no project imports: it runs in a fresh ``-I -S`` interpreter.
"""

from __future__ import annotations

import ctypes
import os
import signal
import sys
from collections.abc import Iterable

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
_STOP = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)
_WATCH = {signal.SIGCHLD, *_STOP}


def main(argv: list[str]) -> int:
    status_fd, cgroup, parent = int(argv[1]), argv[2], int(argv[3])
    program = argv[5:] if argv[4:5] == ["--"] else []
    os.set_inheritable(status_fd, False)  # the program must not hold it: its EOF means "done"
    if not program:
        return 2
    # Signals are taken with sigwaitinfo, never by handlers, so no stop can interrupt cleanup.
    old_mask = signal.pthread_sigmask(signal.SIG_BLOCK, _WATCH)
    libc = ctypes.CDLL(None, use_errno=True)
    # Should it fail (a seccomp policy), the program still runs; the sweep then finds only
    # descendants whose parents are alive, and the cgroup, if any, the rest.
    libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    if os.getppid() != parent:  # the parent died before PDEATHSIG was armed
        return 3
    pid = os.fork()
    if pid == 0:
        _exec(program, cgroup, status_fd, old_mask)
    # Only the program holds its stdin/stdout/stderr: their EOF then means it (and its
    # descendants) are gone, and a program that closes stdin makes the writer see EPIPE.
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    status = None
    while status is None:
        if signal.sigwaitinfo(_WATCH).si_signo != signal.SIGCHLD:
            break
        status = _reap(pid)
    end_status = _end_all(cgroup, pid)
    status = status if status is not None else end_status
    if status is not None:
        _report(status_fd, b"W %d\n" % status)
    return 0


def _exec(program: list[str], cgroup: str, status_fd: int, mask: Iterable[int]) -> None:
    """In the forked child: join the cgroup, restore what Python changed, exec; never returns."""
    try:
        if cgroup != "-":
            try:
                fd = os.open(os.path.join(cgroup, "cgroup.procs"), os.O_WRONLY)
                try:
                    os.write(fd, b"0")
                finally:
                    os.close(fd)
            except OSError:
                pass  # still contained: the launcher's /proc sweep finds every descendant
        # Its own process group, so that a program's `kill 0` (a common shell idiom for ending
        # its background jobs) does not reach the launcher and stop the grade.
        os.setpgid(0, 0)
        for sig in (signal.SIGPIPE, signal.SIGXFSZ):  # Python ignores these; a program must not
            signal.signal(sig, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)
        os.execvp(program[0], program)
    except OSError as exc:
        _report(status_fd, b"E %d\n" % (exc.errno or 0))
    finally:
        os._exit(127)


def _reap(main_pid: int) -> int | None:
    """Reap every exited child; the main program's wait status once it is among them."""
    found = None
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return found
        if pid == 0:
            return found
        if pid == main_pid:
            found = status


def _end_all(cgroup: str, main_pid: int) -> int | None:
    """Kill every descendant and reap them until none is left; the main program's wait
    status if it was reaped here."""
    me, status = os.getpid(), None
    while True:
        try:
            while (reaped := os.waitpid(-1, os.WNOHANG))[0] > 0:
                if reaped[0] == main_pid:
                    status = reaped[1]
        except ChildProcessError:
            return status  # no children: every orphaned descendant would have become one
        if cgroup != "-":
            _write(os.path.join(cgroup, "cgroup.kill"), b"1")
        for pid in _descendants(me):
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        signal.sigtimedwait({signal.SIGCHLD}, 0.01)


def _descendants(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
            ppid = int(stat.rsplit(b")", 1)[1].split()[1])  # the name in (...) may hold spaces
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(name))
    found, todo = [], [root]
    while todo:
        for child in children.get(todo.pop(), ()):
            found.append(child)
            todo.append(child)
    return found


def _write(path: str, data: bytes) -> None:
    try:
        fd = os.open(path, os.O_WRONLY)
    except OSError:
        return
    try:
        os.write(fd, data)
    except OSError:
        pass
    finally:
        os.close(fd)


def _report(fd: int, line: bytes) -> None:
    try:
        os.write(fd, line)
    except OSError:
        pass  # the runner stopped listening (it timed out)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
