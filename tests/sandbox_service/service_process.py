"""``assay sandbox serve`` as a real process on 127.0.0.1 at a free port, for the tests and
``bench/sandbox_remote.py``. Started and stopped by its own pid; its log is kept in a file."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

ASSAY = Path(sys.executable).parent / "assay"
SECRET = "test-secret-0123456789abcdef0123456789"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class SandboxService:
    """One service process. ``secret`` None starts it with ``--insecure-no-secret``; ``args``
    are more options (``--workers 1 --queue 0``); the same port is kept across restarts."""

    def __init__(self, *, secret: str | None = SECRET, args: tuple[str, ...] = (), port: int | None = None) -> None:
        self.secret = secret
        self.args = args
        self.port = port or free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None
        self._log = tempfile.NamedTemporaryFile(prefix="assay-sandbox-service-", suffix=".log", delete=False)

    def start(self, timeout_s: float = 30.0) -> SandboxService:
        """Start the process and wait until ``GET /health`` answers."""
        env = {k: v for k, v in os.environ.items() if k not in ("SANDBOX_URL", "SANDBOX_SECRET")}
        if self.secret is not None:
            env["SANDBOX_SECRET"] = self.secret
        argv = [str(ASSAY), "sandbox", "serve", "--port", str(self.port), "--log-level", "warning", *self.args]
        if self.secret is None:
            argv.append("--insecure-no-secret")
        self.proc = subprocess.Popen(argv, env=env, stdout=self._log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"the sandbox service exited ({self.proc.returncode}): {self.log()}")
            try:
                with urllib.request.urlopen(self.url + "/health", timeout=1) as response:
                    if response.status == 200:
                        return self
            except (urllib.error.URLError, OSError):
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"the sandbox service did not answer within {timeout_s} s: {self.log()}")

    def stop(self, sig: int = signal.SIGTERM, timeout_s: float = 15.0) -> None:
        """Signal the process by its pid (SIGTERM: a graceful stop) and wait; SIGKILL if it lingers."""
        if self.proc is None or self.proc.poll() is not None:
            return
        os.kill(self.proc.pid, sig)
        try:
            self.proc.wait(timeout_s)
        except subprocess.TimeoutExpired:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait()

    def log(self) -> str:
        self._log.flush()
        return Path(self._log.name).read_text(errors="replace")[-3000:]

    def __enter__(self) -> SandboxService:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
        self._log.close()
        os.unlink(self._log.name)
