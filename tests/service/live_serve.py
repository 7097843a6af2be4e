"""``assay serve`` as a child process on a free port of 127.0.0.1, stopped by its pid, and raw
sockets to talk to it below any HTTP client (which would refuse to send what the tests send)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx2 as httpx
from pg_server import free_port


def assay(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "assay.cli.main", *args], env=env, capture_output=True, text=True,
                          timeout=120)


class Serve:
    """One ``assay serve`` process; its stderr goes to ``log``."""

    def __init__(self, env: dict[str, str], log: Path, *args: str) -> None:
        self.env = env
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log
        self.args = args
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> Serve:
        with open(self.log, "ab") as out:
            self.process = subprocess.Popen([sys.executable, "-m", "assay.cli.main", "serve", "--host", "127.0.0.1",
                                             "--port", str(self.port), *self.args],
                                            env=self.env, stdout=out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"assay serve exited: {self.log.read_text()[-3000:]}")
            try:
                if httpx.get(self.url + "/ready", timeout=1).status_code == 200:
                    return self
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        raise AssertionError(f"assay serve did not answer within 60 s: {self.log.read_text()[-3000:]}")

    def stop(self, sig: int = signal.SIGTERM) -> None:
        """Stop it by its pid with ``sig`` (SIGKILL: as a crash would); SIGKILL after 30 s."""
        if self.process is not None and self.process.poll() is None:
            os.kill(self.process.pid, sig)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.kill(self.process.pid, signal.SIGKILL)
                self.process.wait(timeout=10)

    def memory_mb(self) -> dict[str, int]:
        """The process's resident memory now (``VmRSS``) and at its peak (``VmHWM``), in MiB."""
        assert self.process is not None
        out = {}
        with open(f"/proc/{self.process.pid}/status") as status:
            for line in status:
                key, _, value = line.partition(":")
                if key in ("VmHWM", "VmRSS"):
                    out[key] = int(value.split()[0]) // 1024
        return out

    def connect(self, timeout: float = 10) -> socket.socket:
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=timeout)
        return sock


def read_answer(sock: socket.socket) -> tuple[int, dict[str, str], bytes]:
    """Status, headers (lower-case names) and body of one answer with a Content-Length."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise AssertionError(f"the connection closed before an answer: {data!r}")
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0"))
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    return int(lines[0].split()[1]), headers, body
