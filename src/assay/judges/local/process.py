"""``LocalJudge``: ``assay judge serve-local`` as a child process. It is started with a free
port, its address is the first line it prints, and it is stopped by its pid (SIGTERM, then
SIGKILL). Its standard input is a pipe it watches: when this process dies without stopping it,
the pipe closes and the server stops too, so no model server outlives its owner."""

from __future__ import annotations

import os
import selectors
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence

from assay.core.errors import AssayError
from assay.judges.local.find import MODEL_NAME
from assay.judges.local.serve import LocalOptions

_STOP_WAIT_S = 5.0


class LocalJudge:
    """A running local judge: ``url`` (``http://127.0.0.1:PORT/v1``), ``model`` and ``pid``."""

    def __init__(self, process: subprocess.Popen[bytes], url: str, log_path: str) -> None:
        self.process = process
        self.url = url
        self.model = MODEL_NAME
        self.log_path = log_path

    @property
    def pid(self) -> int:
        return self.process.pid

    @classmethod
    def start(cls, options: LocalOptions | None = None, *, environ: Mapping[str, str],
              command: Sequence[str] | None = None, timeout_s: float = 120.0) -> LocalJudge:
        """Start the server and wait until it answers at its address (``timeout_s``). ``command``
        is how to run ``assay`` (default: this Python's ``assay.cli.entry``); ``environ`` its
        environment. AssayError, with the end of the server's log, when it does not start."""
        options = options or LocalOptions()
        base = list(command) if command else [sys.executable, "-m", "assay.cli.entry"]
        argv = [*base, "judge", "serve-local", "--port", str(options.port), "--threads", str(options.threads),
                "--context", str(options.context), "--parallel", str(options.parallel), "--until-stdin-closes"]
        log = tempfile.NamedTemporaryFile(prefix="assay-local-judge-", suffix=".log", delete=False)
        process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log,
                                   env={**environ, "OMP_WAIT_POLICY": "passive"})
        log.close()
        line = _first_line(process, timeout_s)
        if not line.startswith("http://"):
            _end(process)
            raise AssayError(f"the local judge did not start ({line or 'no address printed'}); "
                             f"its log: {_tail(log.name)}")
        return cls(process, line, log.name)

    def stop(self) -> int | None:
        """Stop the server (idempotent); its exit status."""
        code = _end(self.process)
        try:
            os.unlink(self.log_path)
        except OSError:
            pass
        return code

    def __enter__(self) -> LocalJudge:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _first_line(process: subprocess.Popen[bytes], timeout_s: float) -> str:
    """The first line the child prints, or "" when it exits or says nothing in time."""
    assert process.stdout is not None
    deadline = time.monotonic() + timeout_s
    buffer = b""
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ)
        while b"\n" not in buffer and (left := deadline - time.monotonic()) > 0:
            if not selector.select(timeout=min(left, 0.5)):
                if process.poll() is not None:
                    break
                continue
            chunk = os.read(process.stdout.fileno(), 4096)
            if not chunk:
                break
            buffer += chunk
    return buffer.split(b"\n")[0].decode("utf-8", "replace").strip()


def _end(process: subprocess.Popen[bytes]) -> int | None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(_STOP_WAIT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(_STOP_WAIT_S)
    for stream in (process.stdin, process.stdout):
        if stream is not None:
            stream.close()
    return process.returncode


def _tail(path: str, chars: int = 600) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return "unreadable"
    return text[-chars:].strip() or "empty"
