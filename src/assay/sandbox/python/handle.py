"""The host's side of one zygote: start it, take pre-forked children, reap them, stop it."""

from __future__ import annotations

import json
import os
import socket
import struct
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assay.sandbox.python.zygote import CHILD_FMT, PID_FMT, STATUS_FMT

_SRC_ROOT = str(Path(__file__).resolve().parents[3])  # the directory holding the `assay` package
_BOOT = f"import sys; sys.path.insert(0, {_SRC_ROOT!r}); from assay.sandbox.python.zygote import bootstrap; bootstrap()"
# Only what Python needs to start; nothing of the host's environment (keys, tokens) goes along.
SCRUBBED_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}
_CHILD_SIZE = struct.calcsize(CHILD_FMT)
# A zygote answers in microseconds (a fork takes ~1 ms); silence this long means it is stuck.
_REPLY_TIMEOUT = 30.0


class ZygoteGone(RuntimeError):
    """The zygote died or refused to start; ``refused`` is its reason when it declined."""

    def __init__(self, message: str, refused: bool = False) -> None:
        super().__init__(message)
        self.refused = refused


@dataclass(slots=True)
class Child:
    """A confined child waiting for its request, and the host's ends of its pipes."""

    pid: int
    base_vm: int
    req_w: int
    res_r: int
    log_r: int
    pidfd: int

    def close(self) -> None:
        for fd in (self.req_w, self.res_r, self.log_r, self.pidfd):
            if fd >= 0:
                try:
                    os.close(fd)
                except OSError:
                    pass


class Zygote:
    """One zygote process. Used by one thread at a time (the pool hands slots out)."""

    def __init__(self, options: dict[str, Any], start_timeout: float = 60.0) -> None:
        self._options = options
        self._start_timeout = start_timeout
        self._proc: subprocess.Popen | None = None
        self._sock: socket.socket | None = None
        self._ready: Child | None = None
        self._stopping = threading.Lock()  # the pool's close and a thread starting it in reserve may both stop it
        self.hello: dict[str, Any] = {}

    @property
    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def start(self) -> dict[str, Any]:
        """Start the zygote and wait for its hello; raise ``ZygoteGone`` if it refuses or fails."""
        self.stop()  # a predecessor's socket and pre-forked child must not outlive it
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-I", "-c", _BOOT, str(theirs.fileno()), json.dumps(self._options)],
                pass_fds=[theirs.fileno()], env=SCRUBBED_ENV, cwd="/", stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, start_new_session=True)
        finally:
            theirs.close()
        self._sock = ours
        ours.settimeout(self._start_timeout)
        try:
            msg = self._recv()
        except ZygoteGone:
            self.stop()
            raise
        ours.settimeout(_REPLY_TIMEOUT)
        if msg[:1] != b"H":
            self.stop()
            raise ZygoteGone(f"sandbox zygote failed to start: {msg[1:].decode(errors='replace')}")
        self.hello = json.loads(msg[1:])
        if self.hello.get("refused"):
            self.stop()
            raise ZygoteGone(self.hello["refused"], refused=True)
        self._send(b"F")
        return self.hello

    def take_child(self) -> Child:
        """The next pre-forked child; asks the zygote to fork its successor at once."""
        child = self._ready
        self._ready = None
        while child is None:
            msg, fds = self._recv_with_fds()
            if msg[:1] == b"C":
                child = self._child(msg, fds)
        self._send(b"F")
        return child

    def reap(self, pid: int) -> int:
        """Reap an exited child in the zygote and return its wait status."""
        self._send(b"R" + struct.pack(PID_FMT, pid))
        while True:
            msg, fds = self._recv_with_fds()
            if msg[:1] == b"C":
                self._ready = self._child(msg, fds)
            elif msg[:1] == b"S":
                got, status = struct.unpack(STATUS_FMT, msg[1:])
                if got == pid:
                    return status

    def reap_later(self, pid: int) -> None:
        """Have the zygote reap a killed child without waiting for it: its status message is
        skipped by whichever later call reads the socket (``take_child`` and ``reap`` keep only
        what they wait for)."""
        self._send(b"R" + struct.pack(PID_FMT, pid))

    def stop(self, timeout: float = 5.0) -> None:
        """Close the socket (the zygote exits and its children die with it), then make sure."""
        with self._stopping:
            self._stop(timeout)

    def _stop(self, timeout: float) -> None:
        if self._ready is not None:
            self._ready.close()
            self._ready = None
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        if self._proc is not None:
            try:
                self._proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()
            self._proc = None

    def _child(self, msg: bytes, fds: list[int]) -> Child:
        pid, base_vm = struct.unpack(CHILD_FMT, msg[1:1 + _CHILD_SIZE])
        if len(fds) != 4:
            for fd in fds:
                os.close(fd)
            raise ZygoteGone("sandbox zygote sent a malformed child message")
        return Child(pid, base_vm, *fds)

    def _send(self, data: bytes) -> None:
        if self._sock is None:
            raise ZygoteGone("sandbox zygote is stopped")
        try:
            self._sock.send(data)
        except OSError as exc:
            raise ZygoteGone(f"sandbox zygote is gone: {exc}") from None

    def _recv(self) -> bytes:
        msg, _ = self._recv_with_fds()
        return msg

    def _recv_with_fds(self) -> tuple[bytes, list[int]]:
        if self._sock is None:
            raise ZygoteGone("sandbox zygote is stopped")
        try:
            # MSG_CMSG_CLOEXEC: other processes the host starts must not inherit these pipes.
            msg, ancdata, _, _ = self._sock.recvmsg(
                8192, socket.CMSG_SPACE(4 * 4), socket.MSG_CMSG_CLOEXEC)
        except (OSError, TimeoutError) as exc:
            raise ZygoteGone(f"sandbox zygote did not answer: {exc}") from None
        fds: list[int] = []
        for level, kind, data in ancdata:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                usable = len(data) - len(data) % 4
                fds.extend(struct.unpack(f"={usable // 4}i", data[:usable]))
        if not msg:
            for fd in fds:
                os.close(fd)
            raise ZygoteGone("sandbox zygote exited")
        return msg, fds
