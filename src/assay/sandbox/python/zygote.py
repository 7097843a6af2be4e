"""The zygote: a small, warm, trusted process that forks one confined child per chunk of samples.

Started by the host with ``python -I``, a scrubbed environment and one end of a
``SOCK_SEQPACKET`` pair. It leaves the host's network namespace, checks the confinement
layers, imports the allow-list, freezes its heap (``gc.freeze``: children then do not touch,
and so do not copy, those pages) and then serves two requests:

``F``: fork the next child. It creates the child's request, result and output pipes, forks,
and passes the host's ends plus a pidfd to the host (``SCM_RIGHTS``), keeping none. The child
confines itself at once and waits for its request, so forking happens ahead of demand and
tenant data goes from the host straight to the confined child, never through the zygote.

``R pid``: reap that (already exited or killed) child and answer its wait status.

Messages to the host: ``H`` + JSON hello, ``C`` + (pid, base_vm) with four fds, ``S`` +
(pid, status), ``E`` + text for a fatal start-up error. End of file on the socket (the host
closed it or died) ends the zygote; its children then die of their parent-death signal.
"""

from __future__ import annotations

import array
import gc
import json
import os
import signal
import socket
import struct
import sys

from assay.sandbox import _probe
from assay.sandbox.confine import REQUIRED_LAYERS, Confinement, enter_network_namespace, prepare
from assay.sandbox.python import allowlist, child

CHILD_FMT = "=iQ"
STATUS_FMT = "=ii"
PID_FMT = "=i"
_SKIPPABLE = {"landlock": "landlock", "seccomp": "seccomp", "uid_drop": "uid"}


def main(sock: socket.socket, options: dict) -> None:
    """Serve the host until it goes away."""
    in_netns = enter_network_namespace()
    layers = _probe.probe()
    layers["netns"] = {"available": in_netns,
                       "detail": "zygote runs in its own empty network namespace" if in_netns
                       else "unshare(CLONE_NEWNET) refused"}
    required = options.get("required_layers") or REQUIRED_LAYERS
    missing = [name for name in required if not layers.get(name, {}).get("available")]
    hello = {"pid": os.getpid(), "layers": layers, "missing_layers": missing}
    if missing and not options.get("weak"):
        hello["refused"] = ("required sandbox layers are unavailable: " + ", ".join(missing)
                            + "; set ASSAY_SANDBOX_ALLOW_WEAK=1 to run untrusted code without them")
        sock.send(b"H" + json.dumps(hello).encode())
        return
    skip = frozenset(flag for name, flag in _SKIPPABLE.items() if not layers[name]["available"])
    confinement = Confinement(memory_bytes=None, cpu_seconds=None, nofile=int(options.get("nofile", 64)),
                              drop_to_uid=options.get("uid", 65534),
                              parent_death_signal=signal.SIGKILL, skip=skip)
    prepare(confinement)
    hello["missing_modules"] = allowlist.preload()
    hello["active_layers"] = [name for name in ("netns", "rlimits", "landlock", "uid_drop", "seccomp")
                              if layers[name]["available"] and _SKIPPABLE.get(name) not in skip]
    user_builtins = allowlist.restricted_builtins()
    child.warm(user_builtins)
    gc.collect()
    gc.freeze()
    sock.send(b"H" + json.dumps(hello).encode())
    _serve(sock, confinement, user_builtins)


def _serve(sock: socket.socket, confinement: Confinement, user_builtins: dict) -> None:
    zygote_pid = os.getpid()
    page = os.sysconf("SC_PAGE_SIZE")
    children: set[int] = set()
    while True:
        try:
            msg = sock.recv(64)
        except ConnectionResetError:  # the host closed with our messages unread (a status it skips)
            msg = b""
        if not msg:
            break
        if msg[:1] == b"F":
            children.add(_fork_child(sock, confinement, user_builtins, zygote_pid, page))
        elif msg[:1] == b"R":
            (pid,) = struct.unpack(PID_FMT, msg[1:])
            children.discard(pid)
            try:
                _, status = os.waitpid(pid, 0)
            except ChildProcessError:
                status = -1
            sock.send(b"S" + struct.pack(STATUS_FMT, pid, status))
    # The host is gone or closing: end every child before exiting, so that the host's wait on
    # the zygote means no process is left (the parent-death signal alone would be asynchronous).
    for pid in children:
        try:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
        except (ProcessLookupError, ChildProcessError):
            pass


def _fork_child(sock: socket.socket, confinement: Confinement, user_builtins: dict,
                zygote_pid: int, page: int) -> int:
    req_r, req_w = os.pipe()
    res_r, res_w = os.pipe()
    log_r, log_w = os.pipe()
    with open("/proc/self/statm", "rb") as fh:
        base_vm = int(fh.read().split()[0]) * page
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child; never returns
        try:
            child.run(req_r, res_w, log_w, confinement, zygote_pid, base_vm, user_builtins)
        finally:
            os._exit(child.EXIT_CONFINE_FAILED)
    pidfd = os.pidfd_open(pid)
    fds = [req_w, res_r, log_r, pidfd]
    try:
        sock.sendmsg([b"C" + struct.pack(CHILD_FMT, pid, base_vm)],
                     [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])
    finally:
        for fd in (req_r, req_w, res_r, res_w, log_r, log_w, pidfd):
            os.close(fd)
    return pid


def bootstrap() -> None:
    """``python -I -c`` entry: argv = [fd of the control socket, JSON options]."""
    sock = socket.socket(fileno=int(sys.argv[1]))
    try:
        main(sock, json.loads(sys.argv[2]))
    except BaseException as exc:  # noqa: BLE001 - tell the host why, then stop
        try:
            sock.send(b"E" + f"{type(exc).__name__}: {exc}".encode()[:4000])
        except OSError:
            pass
    finally:
        os._exit(0)
